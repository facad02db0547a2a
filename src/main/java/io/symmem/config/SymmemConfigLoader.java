package io.symmem.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Reads and validates {@link SymmemConfig} outside a running Quarkus application: for library users,
 * for the launcher, and before Quarkus starts, so that a bad variable stops start-up with a message
 * naming it instead of a stack trace naming an internal property.
 *
 * <p>Two steps: each set variable's raw text against its {@link ConfigVariable} ({@link #valueProblems});
 * then, when every value is well-formed, the mapping and the relations between values
 * ({@link SymmemConfigValidator}). Each problem is one line.
 */
public final class SymmemConfigLoader {
    private SymmemConfigLoader() {
    }

    /** Reads this process's environment and system properties. */
    public static SymmemConfig fromProcess() {
        return load(System.getenv(), System.getProperties());
    }

    /** Reads the given environment (and system properties, which win over it). */
    public static SymmemConfig load(Map<String, String> env, Properties systemProperties) {
        return load(env, systemProperties, HostInterfaces::names);
    }

    /**
     * As {@link #load(Map, Properties)}, with this host's network interface names from {@code interfaces}
     * (null when unknown), which tests replace.
     */
    static SymmemConfig load(Map<String, String> env, Properties systemProperties, Supplier<List<String>> interfaces) {
        List<String> problems = valueProblems(env, systemProperties);
        if (!problems.isEmpty()) {
            // The mapping would only repeat these, less clearly; relations between bad values mean nothing.
            throw new InvalidConfigurationException(problems);
        }
        SmallRyeConfig config = build(env, systemProperties);
        SymmemConfig mapped;
        try {
            mapped = config.getConfigMapping(SymmemConfig.class);
        } catch (RuntimeException e) {
            throw new InvalidConfigurationException(explain(e, config));
        }
        problems.addAll(missingPartners(env));
        problems.addAll(SymmemConfigValidator.problems(mapped));
        if (mapped.backend() == Backend.NVSHMEM) {
            // Only where NVSHMEM runs: NCCL_SOCKET_IFNAME set for a whole cluster must not stop a host rank.
            NvshmemInterfaceCheck.problem(NvshmemEnvironment.resolve(env), interfaces.get()).ifPresent(problems::add);
        }
        if (!problems.isEmpty()) {
            throw new InvalidConfigurationException(problems);
        }
        return mapped;
    }

    /** Every problem {@link #load} would report, one line each; empty when the configuration is valid. */
    public static List<String> problems(Map<String, String> env, Properties systemProperties) {
        return problems(env, systemProperties, HostInterfaces::names);
    }

    static List<String> problems(Map<String, String> env, Properties systemProperties, Supplier<List<String>> interfaces) {
        try {
            load(env, systemProperties, interfaces);
            return List.of();
        } catch (InvalidConfigurationException e) {
            return e.problems();
        }
    }

    /**
     * The problems of each set variable's own value (form, range, empty), one line each, from whichever
     * source set it (system properties, the environment, torchrun's names): what every command checks,
     * since the application reads every variable as it starts.
     */
    public static List<String> valueProblems(Map<String, String> env, Properties systemProperties) {
        // Without the derived NVSHMEM values: a bad NCCL value is the user's NCCL_* mistake, named once.
        SmallRyeConfig raw = setByUser(env, systemProperties).build();
        List<String> problems = new ArrayList<>();
        for (ConfigVariable variable : ConfigVariable.values()) {
            variable.problem(raw.getConfigValue(variable.property()).getRawValue()).ifPresent(problems::add);
        }
        return problems;
    }

    /**
     * The NVSHMEM variables in effect (the user's, else those {@link NvshmemEnvironment} derives), once
     * the whole configuration is valid.
     *
     * @throws InvalidConfigurationException as {@link #load(Map, Properties)}
     */
    public static NvshmemConfig nvshmem(Map<String, String> env, Properties systemProperties) {
        load(env, systemProperties);
        return build(env, systemProperties).getConfigMapping(NvshmemConfig.class);
    }

    /**
     * The effective value of every variable and where it came from; then any other NVSHMEM_* variable
     * set in the environment, which NVSHMEM reads though symmem does not check it.
     */
    public static List<EffectiveSetting> effective(Map<String, String> env, Properties systemProperties) {
        SmallRyeConfig config;
        try {
            // With the mapping registered, unset variables show their default values.
            config = builder(env, systemProperties).withMapping(SymmemConfig.class).withMapping(NvshmemConfig.class).build();
        } catch (RuntimeException invalid) {
            // The listing must still show what was set, so that the user can see the bad value.
            config = buildRaw(env, systemProperties);
        }
        List<EffectiveSetting> rows = new ArrayList<>(EffectiveSetting.of(config));
        NvshmemEnvironment.resolve(env).settings().stream()
                .filter(s -> ConfigVariable.forName(s.variable()).isEmpty()).forEach(rows::add);
        return rows;
    }

    /** RANK without WORLD_SIZE (or the reverse) is a launcher mistake, not a single-process run. */
    static List<String> missingPartners(Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        // An empty one is reported as empty already.
        boolean rank = isSet(env.get(ConfigVariable.RANK.name()));
        boolean world = isSet(env.get(ConfigVariable.WORLD_SIZE.name()));
        if (rank && !world) {
            problems.add("WORLD_SIZE is missing: RANK=" + env.get("RANK")
                    + " is set, so WORLD_SIZE must be too (set both, or neither for a single process)");
        } else if (world && !rank) {
            problems.add("RANK is missing: WORLD_SIZE=" + env.get("WORLD_SIZE")
                    + " is set, so RANK must be too (set both, or neither for a single process)");
        }
        return problems;
    }

    private static boolean isSet(String value) {
        return value != null && !value.isBlank();
    }

    private static SmallRyeConfig build(Map<String, String> env, Properties systemProperties) {
        try {
            return builder(env, systemProperties).withMapping(SymmemConfig.class).withMapping(NvshmemConfig.class).build();
        } catch (RuntimeException e) {
            throw new InvalidConfigurationException(explain(e, buildRaw(env, systemProperties)));
        }
    }

    private static SmallRyeConfig buildRaw(Map<String, String> env, Properties systemProperties) {
        return builder(env, systemProperties).build();
    }

    private static SmallRyeConfigBuilder builder(Map<String, String> env, Properties systemProperties) {
        return setByUser(env, systemProperties).withSources(NvshmemConfigSourceFactory.sources(env));
    }

    /** Only the sources the user writes: the environment (torchrun's names included), system properties. */
    private static SmallRyeConfigBuilder setByUser(Map<String, String> env, Properties systemProperties) {
        return new SmallRyeConfigBuilder()
                .withSources(new EnvConfigSource(env, 300))
                .withSources(new TorchrunEnvConfigSource(env))
                .withSources(new PropertiesConfigSource(toMap(systemProperties), "system properties", 400))
                .withConverter(Duration.class, 200, new DurationConverter());
    }

    private static Map<String, String> toMap(Properties properties) {
        return properties.stringPropertyNames().stream()
                .collect(Collectors.toMap(name -> name, properties::getProperty));
    }

    /** Turns SmallRye's problems into messages that name the variable the user set. */
    static List<String> explain(RuntimeException e, SmallRyeConfig raw) {
        List<String> messages = new ArrayList<>();
        if (e instanceof ConfigValidationException validation) {
            for (int i = 0; i < validation.getProblemCount(); i++) {
                messages.add(explain(validation.getProblem(i).getMessage(), raw));
            }
        } else {
            messages.add(explain(String.valueOf(e.getMessage()), raw));
        }
        return messages;
    }

    private static String explain(String message, SmallRyeConfig raw) {
        for (ConfigVariable variable : ConfigVariable.values()) {
            if (message.contains(variable.property())) {
                String value = raw.getConfigValue(variable.property()).getRawValue();
                return variable.name() + "=" + value + " is invalid: expected " + variable.allowed()
                        + " (" + converterReason(message) + ")";
            }
        }
        return message;
    }

    /**
     * SmallRye wraps a converter's message in its own ("SRCFG00039: The config property symmem.x with
     * the config value ... threw an Exception whilst being converted REASON"), naming the internal
     * property; the user needs only the reason, the variable is named already.
     */
    private static String converterReason(String message) {
        String marker = "whilst being converted ";
        int at = message.indexOf(marker);
        return at < 0 ? message : message.substring(at + marker.length()).trim();
    }
}
