package io.symmem.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The NVSHMEM environment of a rank: every NVSHMEM_* variable in effect, its value and where it came
 * from, computed from the process environment alone (NVSHMEM reads nothing else), before NVSHMEM
 * initialises.
 *
 * <p>Precedence, the same as PyTorch's NVSHMEM backend applies it, plus symmem's own two rules:
 * <ol>
 * <li>An NVSHMEM variable the user set always wins, whatever else is set; symmem never exports it.</li>
 * <li>{@code NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME} unset: {@code NCCL_SOCKET_IFNAME}'s value.</li>
 * <li>{@code NVSHMEM_HCA_LIST} unset: {@code NCCL_IB_HCA}'s value, and then
 * {@code NVSHMEM_ENABLE_NIC_PE_MAPPING=1} unless the user set that one (NVSHMEM ignores the list
 * otherwise). A list the user set does not turn the mapping on: that stays theirs to decide.</li>
 * <li>{@code NVSHMEM_IB_GID_INDEX} unset: {@code NCCL_IB_GID_INDEX}'s value.</li>
 * <li>{@code NVSHMEM_DISABLE_NVLS} unset: 1, since NVLink multicast stays off on shared machines.</li>
 * <li>{@code NVSHMEM_DISABLE_LOCAL_ONLY_PROXY} unset: 1. On NVLink-only nodes NVSHMEM's proxy thread
 * serves only device-side NVSHMEM (global exit, device wait timeouts), which symmem does not use, and it
 * busy-polls a CPU core for the life of the process (measured: 100% of a core at world 1). NVSHMEM
 * ignores the variable where a network transport needs the proxy.</li>
 * <li>{@code NVSHMEM_SYMMETRIC_SIZE} unset and {@code SYMMEM_NVSHMEM_HEAP_SIZE} set: that size in bytes.</li>
 * </ol>
 * NCCL's values are copied verbatim: the two libraries share the list syntax ({@code ^}, {@code =}),
 * so nothing is translated. A variable counts as set when it is present, even empty (an empty one is
 * refused at start-up anyway).
 *
 * <p>NVSHMEM releases that read {@code /etc/nvshmem.conf}, {@code ~/.nvshmem.conf} or
 * {@code NVSHMEM_CONF_FILE} let those files win over the environment; symmem does not read them.
 */
public final class NvshmemEnvironment {
    /** The source of a value the user set in the environment. */
    public static final String ENVIRONMENT = "environment";
    static final String NVLS_DEFAULT = "symmem default: NVLink multicast stays off";
    static final String PROXY_DEFAULT = "symmem default: no proxy thread polling a core for device-side NVSHMEM";
    private static final String UNCHECKED = "not checked by symmem: passed to NVSHMEM as set";

    /** One NVSHMEM variable in effect. */
    private record Value(String value, String source, boolean derived) {
    }

    private final Map<String, Value> values;

    private NvshmemEnvironment(Map<String, Value> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /** Applies the precedence rules above to {@code env}; reads nothing else. */
    public static NvshmemEnvironment resolve(Map<String, String> env) {
        Map<String, Value> values = new LinkedHashMap<>();
        new TreeMap<>(env).forEach((name, value) -> {
            if (name.startsWith("NVSHMEM_")) {
                values.put(name, new Value(value, ENVIRONMENT, false));
            }
        });
        copy(env, values, ConfigVariable.NCCL_SOCKET_IFNAME, ConfigVariable.NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME);
        if (copy(env, values, ConfigVariable.NCCL_IB_HCA, ConfigVariable.NVSHMEM_HCA_LIST)) {
            derive(values, ConfigVariable.NVSHMEM_ENABLE_NIC_PE_MAPPING, "1",
                    "with NVSHMEM_HCA_LIST from NCCL_IB_HCA (NVSHMEM ignores the list otherwise)");
        }
        copy(env, values, ConfigVariable.NCCL_IB_GID_INDEX, ConfigVariable.NVSHMEM_IB_GID_INDEX);
        derive(values, ConfigVariable.NVSHMEM_DISABLE_NVLS, "1", NVLS_DEFAULT);
        derive(values, ConfigVariable.NVSHMEM_DISABLE_LOCAL_ONLY_PROXY, "1", PROXY_DEFAULT);
        heapBytes(env).ifPresent(bytes -> derive(values, ConfigVariable.NVSHMEM_SYMMETRIC_SIZE, Long.toString(bytes),
                "from " + ConfigVariable.SYMMEM_NVSHMEM_HEAP_SIZE.name() + "=" + env.get(ConfigVariable.SYMMEM_NVSHMEM_HEAP_SIZE.name())));
        return new NvshmemEnvironment(values);
    }

    /**
     * Every NVSHMEM variable in effect: the ones symmem knows in {@link ConfigVariable}'s order, then any
     * other NVSHMEM_* set in the environment, by name. Source: {@value #ENVIRONMENT} when the user set
     * it, else the rule that derived it ("from NCCL_SOCKET_IFNAME").
     */
    public List<EffectiveSetting> settings() {
        List<EffectiveSetting> rows = new ArrayList<>();
        for (ConfigVariable variable : ConfigVariable.values()) {
            Value v = values.get(variable.name());
            if (v != null) {
                rows.add(new EffectiveSetting(variable.name(), variable.property(), v.value(), v.source(), variable.allowed()));
            }
        }
        values.forEach((name, v) -> {
            if (ConfigVariable.forName(name).isEmpty()) {
                rows.add(new EffectiveSetting(name, "", v.value(), v.source(), UNCHECKED));
            }
        });
        return rows;
    }

    /** The value and source of one variable in effect, if any. */
    public Optional<EffectiveSetting> setting(ConfigVariable variable) {
        return settings().stream().filter(s -> s.variable().equals(variable.name())).findFirst();
    }

    /**
     * Exactly what symmem must set in the process environment before NVSHMEM initialises: the derived
     * values, each for a variable the environment does not hold. Never one the user set.
     */
    public Map<String, String> toExport() {
        Map<String, String> export = new LinkedHashMap<>();
        values.forEach((name, v) -> {
            if (v.derived()) {
                export.put(name, v.value());
            }
        });
        return Collections.unmodifiableMap(export);
    }

    /** {@code to} takes {@code from}'s value verbatim when {@code to} is unset and {@code from} set. */
    private static boolean copy(Map<String, String> env, Map<String, Value> values, ConfigVariable from, ConfigVariable to) {
        String value = env.get(from.name());
        if (value == null || values.containsKey(to.name())) {
            return false;
        }
        values.put(to.name(), new Value(value, "from " + from.name(), true));
        return true;
    }

    private static void derive(Map<String, Value> values, ConfigVariable variable, String value, String source) {
        values.putIfAbsent(variable.name(), new Value(value, source, true));
    }

    /** SYMMEM_NVSHMEM_HEAP_SIZE in bytes; empty when unset or invalid (start-up reports the latter). */
    private static Optional<Long> heapBytes(Map<String, String> env) {
        String text = env.get(ConfigVariable.SYMMEM_NVSHMEM_HEAP_SIZE.name());
        SizeKind kind = (SizeKind) ConfigVariable.SYMMEM_NVSHMEM_HEAP_SIZE.kind();
        if (text == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(ByteSize.parse(text, kind.min(), kind.max()));
        } catch (ByteSize.InvalidSizeException invalid) {
            return Optional.empty();
        }
    }
}
