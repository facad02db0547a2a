package io.symmem.config;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Every environment variable symmem reads: the property it feeds, the kind of value it takes and
 * what it allows, in words. This one table checks every value before start-up ({@link #problem}),
 * names variables in error messages and lists them in the effective configuration, so a user
 * always sees the name they set, and a new variable is checked as soon as it is listed here.
 */
public enum ConfigVariable {
    RANK("symmem.rank", true, new IntegerKind(0, SymmemConfigValidator.MAX_WORLD_SIZE - 1),
            "an integer with 0 <= RANK < WORLD_SIZE"),
    WORLD_SIZE("symmem.world-size", true, new IntegerKind(1, SymmemConfigValidator.MAX_WORLD_SIZE),
            "an integer from 1 to " + SymmemConfigValidator.MAX_WORLD_SIZE),
    LOCAL_RANK("symmem.local-rank", true, new IntegerKind(0, SymmemConfigValidator.MAX_WORLD_SIZE - 1),
            "an integer with 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE"),
    LOCAL_WORLD_SIZE("symmem.local-world-size", true, new IntegerKind(1, SymmemConfigValidator.MAX_WORLD_SIZE),
            "an integer with 1 <= LOCAL_WORLD_SIZE <= WORLD_SIZE"),
    MASTER_ADDR("symmem.master-addr", true, new HostKind(), "a host name or IP address"),
    // 0 (a free port, taken at the bind) is allowed in form; SymmemConfigValidator allows it only where the store is hosted.
    MASTER_PORT("symmem.master-port", true, new IntegerKind(0, 65535),
            "a TCP port, 1..65535, or 0 on the rank that hosts the store: it binds a free port (see SYMMEM_STORE_PORT_FILE)"),
    SYMMEM_RUN_ID("symmem.run-id", false, new PatternKind(Pattern.compile("[A-Za-z0-9._-]{1,128}")),
            "1 to 128 letters, digits, '.', '_' or '-' (it becomes a store key segment)"),
    SYMMEM_BACKEND("symmem.backend", false, ChoiceKind.of(Backend.class), "one of auto, host, cuda, nvshmem, nccl"),
    SYMMEM_ALLOW_OVERLAPPING_DEVICES("symmem.allow-overlapping-devices", false, new BooleanKind(),
            "true or false (1/0, yes/no, any case); true lets several ranks share a GPU (device LOCAL_RANK % device count)"),
    SYMMEM_DISABLE_MULTICAST("symmem.disable-multicast", false, new BooleanKind(),
            "true or false (1/0, yes/no, any case); true reports NVLink multicast as disabled (symmem never uses it)"),
    SYMMEM_TIMEOUT_STORE("symmem.timeout.store", false, DurationKind.TIMEOUT, Text.TIMEOUT),
    SYMMEM_TIMEOUT_RENDEZVOUS("symmem.timeout.rendezvous", false, DurationKind.TIMEOUT, Text.TIMEOUT),
    SYMMEM_TIMEOUT_BARRIER("symmem.timeout.barrier", false, DurationKind.TIMEOUT, Text.TIMEOUT),
    SYMMEM_TIMEOUT_COLLECTIVE("symmem.timeout.collective", false, DurationKind.TIMEOUT, Text.TIMEOUT),
    // Heartbeats go out several times per liveness bound: below 300ms they would flood the store.
    SYMMEM_TIMEOUT_LIVENESS("symmem.timeout.liveness", false, new DurationKind(Duration.ofMillis(300), Duration.ofMinutes(10)),
            "a duration from 300ms to 10m such as 3s; a rank silent this long is taken for gone"),
    SYMMEM_HTTP_PORT("symmem.http.port", false, IntegerKind.PORT,
            "a TCP port, 1..65535; a rank serves on SYMMEM_HTTP_PORT + LOCAL_RANK"),
    SYMMEM_HTTP_HOST("symmem.http.host", false, new LocalAddressKind(),
            "an address of this machine to serve HTTP on: 0.0.0.0 or :: (every interface), a loopback or "
                    + "interface address such as 127.0.0.1, or a host name that resolves to such addresses"),
    SYMMEM_MANAGEMENT_PORT("symmem.management.port", false, new IntegerKind(0, 65535),
            "a TCP port, 1..65535, or 0 for a free port on every rank; a rank serves health (/q/health) and metrics "
                    + "(/q/metrics) on SYMMEM_MANAGEMENT_PORT + LOCAL_RANK"),
    SYMMEM_MANAGEMENT_HOST("symmem.management.host", false, new LocalAddressKind(),
            "an address of this machine to serve health and metrics on (unset: 0.0.0.0, so that the kubelet and "
                    + "Prometheus reach them), written as SYMMEM_HTTP_HOST"),
    // A bearer token (RFC 6750's token68 form), long enough not to be guessed.
    SYMMEM_API_TOKEN("symmem.api.token", false, new TokenKind(16, 4096),
            "16 to 4096 of the characters A-Z a-z 0-9 - . _ ~ + / (then optional '='): every /v1 route then needs "
                    + "'Authorization: Bearer <token>'"),
    SYMMEM_HTTP_MAX_BODY_BYTES("symmem.http.max-body-bytes", false, new SizeKind(1024, Integer.MAX_VALUE),
            "a size from 1KiB to 2GiB - 1 such as 16MiB (KiB/MiB/GiB = 1024^n, KB/MB/GB = 1000^n): the largest request "
                    + "body the HTTP API reads"),
    SYMMEM_STORE_HOST("symmem.store.host", false, ChoiceKind.of(StoreHost.class), "one of rank0 (rank 0 hosts the store), "
            + "symmem (a `symmem store` process at MASTER_ADDR:MASTER_PORT), tcpstore (any TCPStore server there, "
            + "PyTorch's included)"),
    // Not SmallRye's environment name of its property (that would be SYMMEM_STORE_URL): mapped like torchrun's names.
    SYMMEM_STORE("symmem.store.url", true, new EtcdStoreKind(), "etcd://host:port[,host:port...]/prefix, the "
            + "client URLs of an etcd v3 cluster and a key prefix of segments of letters, digits, '.', '_' or '-' "
            + "(e.g. etcd://10.0.0.1:2379,10.0.0.2:2379/jobs/job-42): every rank keeps the store there, under the "
            + "prefix, instead of at MASTER_ADDR:MASTER_PORT (SYMMEM_STORE_HOST is then not used)"),
    SYMMEM_STORE_PORT_FILE("symmem.store.port-file", false, new PathKind(),
            "an absolute file path: the rank that hosts the store writes the port it bound there; a rank that connects "
                    + "to rank 0's store with MASTER_PORT=0 reads it from there (how `symmem launch` starts every rank at once)"),
    SYMMEM_STORE_MAX_KEY_BYTES("symmem.store.max-key-bytes", false, new SizeKind(1, Limits.MAX_KEY_BYTES),
            "a size from 1 to " + Limits.MAX_KEY_BYTES + " bytes (1MiB): bytes, or with a unit such as 4KiB"),
    SYMMEM_STORE_MAX_VALUE_BYTES("symmem.store.max-value-bytes", false, new SizeKind(1, Integer.MAX_VALUE),
            "a size from 1 to " + Integer.MAX_VALUE + " bytes (2GiB - 1): bytes, or with a unit such as 64MiB "
                    + "(KiB/MiB/GiB = 1024^n, KB/MB/GB = 1000^n)"),
    SYMMEM_STORE_MAX_KEYS_PER_REQUEST("symmem.store.max-keys-per-request", false,
            new IntegerKind(1, Limits.MAX_KEYS_PER_REQUEST), "an integer, 1.." + Limits.MAX_KEYS_PER_REQUEST),
    // Read from the environment by io.symmem.store.StoreSpin (the store also runs outside a rank), not
    // through SymmemConfig; listed here so that they are checked, shown and documented with the rest.
    SYMMEM_STORE_SPIN_MICROS("symmem.store.spin-micros", false, new IntegerKind(0, Limits.MAX_SPIN_MICROS),
            "microseconds, 0.." + Limits.MAX_SPIN_MICROS + ", that a blocking store call polls before it sleeps "
                    + "(unset: 50 with 8 or more cores, else 0)"),
    SYMMEM_STORE_SERVER_SPIN_MICROS("symmem.store.server-spin-micros", false, new IntegerKind(0, Limits.MAX_SPIN_MICROS),
            "microseconds, 0.." + Limits.MAX_SPIN_MICROS + ", that the store server's loop polls after its last "
                    + "request (unset: 50 with 8 or more cores, else 0)"),
    // The memory pool (io.symmem.memory.SymmetricMemPool, docs/mempool.md).
    SYMMEM_POOL_SEGMENT("symmem.pool.segment", false, new SizeKind(4096, 1L << 40),
            "a size from 4KiB to 1TiB such as 64MiB (KiB/MiB/GiB = 1024^n, KB/MB/GB = 1000^n): the symmetric "
                    + "segment a pool grows by (one rendezvous each), rounded up to a multiple of 4KiB"),
    SYMMEM_POOL_LIMIT("symmem.pool.limit", false, new SizeKind(4096, Long.MAX_VALUE),
            "a size such as 8GiB: the most a pool may reserve per rank; past it an allocation fails showing the "
                    + "pool's figures (unset: no limit but the memory)"),
    SYMMEM_POOL_STRICT("symmem.pool.strict", false, new BooleanKind(),
            "true or false (1/0, yes/no, any case); true compares every rank's pool allocation sequence at every "
                    + "allocation (one store round trip each: for debugging), false only when a segment is added"),
    // The NVSHMEM backend's own variables; NvshmemEnvironment turns them into NVSHMEM's.
    SYMMEM_NVSHMEM_HEAP_SIZE("symmem.nvshmem.heap-size", false, new SizeKind(1, Long.MAX_VALUE),
            "a size such as 2GiB (KiB/MiB/GiB = 1024^n, KB/MB/GB = 1000^n): NVSHMEM's symmetric heap per rank, "
                    + "exported as NVSHMEM_SYMMETRIC_SIZE in bytes unless that is set"),
    SYMMEM_NVSHMEM_HOME("symmem.nvshmem.home", false, new PathKind(),
            "an absolute directory holding lib/libnvshmem_host.so.3 (or the library itself): looked in first"),
    // NVSHMEM's and NCCL's own names (their properties, nvshmem.* and nccl.*, are these names under
    // SmallRye's environment rules). Listed so that they are checked and shown; NVSHMEM reads them
    // from the process environment, after NvshmemEnvironment has filled in the unset ones.
    NVSHMEM_HOME("nvshmem.home", false, new PathKind(),
            "an absolute directory: an NVSHMEM installation whose lib/libnvshmem_host.so.3 is looked for after "
                    + "SYMMEM_NVSHMEM_HOME's"),
    NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME("nvshmem.bootstrap-uid-sock-ifname", false, NameListKind.INTERFACES,
            Text.INTERFACES + "; the interfaces of NVSHMEM's bootstrap (unset: NCCL_SOCKET_IFNAME's value)"),
    NVSHMEM_HCA_LIST("nvshmem.hca-list", false, NameListKind.HCAS,
            Text.HCAS + "; the NICs NVSHMEM may use (unset: NCCL_IB_HCA's value)"),
    NVSHMEM_ENABLE_NIC_PE_MAPPING("nvshmem.enable-nic-pe-mapping", false, new BooleanKind(),
            Text.NVSHMEM_BOOLEAN + "; 1 makes NVSHMEM follow NVSHMEM_HCA_LIST (unset: 1 when that list comes from NCCL_IB_HCA)"),
    NVSHMEM_IB_GID_INDEX("nvshmem.ib-gid-index", false, new IntegerKind(0, Integer.MAX_VALUE, true),
            Text.GID_INDEX + " (unset: NCCL_IB_GID_INDEX's value)"),
    NVSHMEM_DISABLE_NVLS("nvshmem.disable-nvls", false, new BooleanKind(),
            Text.NVSHMEM_BOOLEAN + "; 1 keeps NVLink multicast off (unset: 1, symmem's default)"),
    NVSHMEM_DISABLE_LOCAL_ONLY_PROXY("nvshmem.disable-local-only-proxy", false, new BooleanKind(),
            Text.NVSHMEM_BOOLEAN + "; 1 stops NVSHMEM's proxy thread on NVLink-only nodes, where it busy-polls a core "
                    + "for device-side NVSHMEM, which symmem does not use (unset: 1, symmem's default)"),
    NVSHMEM_SYMMETRIC_SIZE("nvshmem.symmetric-size", false, new ShmemSizeKind(1, Long.MAX_VALUE),
            "a whole number of bytes, optionally followed by K, M, G or T (any case; powers of 1024, as NVSHMEM reads "
                    + "them) such as 2G: the symmetric heap per rank (unset: SYMMEM_NVSHMEM_HEAP_SIZE, else NVSHMEM's 1G)"),
    NVSHMEM_DEBUG("nvshmem.debug", false, new ChoiceKind(List.of("version", "warn", "info", "abort", "trace")),
            "one of VERSION, WARN, INFO, ABORT, TRACE: how much NVSHMEM logs"),
    NVSHMEM_INFO("nvshmem.info", false, new BooleanKind(),
            Text.NVSHMEM_BOOLEAN + "; 1 makes NVSHMEM print its settings as it starts"),
    NCCL_SOCKET_IFNAME("nccl.socket-ifname", false, NameListKind.INTERFACES,
            Text.INTERFACES + "; copied to NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME when that is unset"),
    NCCL_IB_HCA("nccl.ib-hca", false, NameListKind.HCAS, Text.HCAS + "; copied to NVSHMEM_HCA_LIST when that is unset"),
    NCCL_IB_GID_INDEX("nccl.ib-gid-index", false, new IntegerKind(0, Integer.MAX_VALUE, true),
            Text.GID_INDEX + " (copied to NVSHMEM_IB_GID_INDEX when that is unset)"),
    // Read from the environment by io.symmem.nccl.Nccl (NCCL is loaded outside a rank too, e.g. by a
    // test main), not through SymmemConfig.
    SYMMEM_NCCL_LIBRARY("symmem.nccl.library", false, new FilePathKind(),
            "an absolute path of a libnccl.so.2 file; when set, it is the only NCCL symmem tries to load");

    /** Upper bounds that code outside this package shares with the table. */
    public static final class Limits {
        /** A key, or a key list, the server must hold in memory at once. */
        public static final int MAX_KEY_BYTES = 1 << 20;
        public static final int MAX_KEYS_PER_REQUEST = 1 << 24;
        /** Polling longer than 10 ms saves no wake-up worth a core. */
        public static final int MAX_SPIN_MICROS = io.symmem.store.StoreSpin.MAX_MICROS;

        private Limits() {
        }
    }

    private static final class Text {
        static final String TIMEOUT = "a duration from 1ms to 24d such as 30s, 500ms or PT1M";
        // NVSHMEM takes a value whose first letter is 0, n or f as off and any other as on, so "off" or
        // "maybe" would turn a feature on: only the words that every reader takes alike pass.
        static final String NVSHMEM_BOOLEAN = "1 or 0 (true/false, yes/no, any case; NVSHMEM reads other words by "
                + "their first letter, so they are refused)";
        static final String INTERFACES = "a non-empty NCCL-style interface list: names or prefixes separated by "
                + "commas (eth,ib0), '^' first to exclude them (^docker,lo), '=' after it for exact names (=eth0)";
        static final String HCAS = "a non-empty NCCL-style InfiniBand device list: names or prefixes separated by "
                + "commas, each with an optional :port (mlx5_0:1,mlx5_1), '^' first to exclude, '=' after it for exact names";
        // NCCL and NVSHMEM may choose by themselves when the variable is unset (recent ones take -1 for
        // that); -1 is refused because older NVSHMEM releases would take it as an index.
        static final String GID_INDEX = "an integer >= 0 without leading zeros, the RoCE GID index (unset it to let "
                + "the library choose)";
    }

    private final String property;
    private final boolean mappedByName;
    private final ValueKind kind;
    private final String allowed;

    ConfigVariable(String property, boolean mappedByName, ValueKind kind, String allowed) {
        this.property = property;
        this.mappedByName = mappedByName;
        this.kind = kind;
        this.allowed = allowed;
    }

    /** The SmallRye property this variable sets. */
    public String property() {
        return property;
    }

    /** What values are allowed, in words. */
    public String allowed() {
        return allowed;
    }

    /** The form its values take; tests derive bad values from it. */
    public ValueKind kind() {
        return kind;
    }

    /**
     * True for another library's variable (NVSHMEM_*, NCCL_*): its property is the name itself under
     * SmallRye's environment rules, and the library, not symmem, decides what unset means.
     */
    public boolean isVendorName() {
        return !property.startsWith("symmem.");
    }

    /**
     * The variable whose value this one takes when unset (LOCAL_RANK takes RANK's, LOCAL_WORLD_SIZE
     * WORLD_SIZE's); empty for every other, whose unset value is a default or simply unset.
     */
    public Optional<ConfigVariable> derivedFrom() {
        return switch (this) {
            case LOCAL_RANK -> Optional.of(RANK);
            case LOCAL_WORLD_SIZE -> Optional.of(WORLD_SIZE);
            default -> Optional.empty();
        };
    }

    /** True for a value that must never be shown: messages and `symmem config` name it without it. */
    public boolean isSecret() {
        return this == SYMMEM_API_TOKEN;
    }

    /** {@code value} as messages and listings may show it: a secret only by its length. */
    public String displayed(String value) {
        return isSecret() ? "(set, " + value.length() + " characters)" : shown(value);
    }

    /** The variable with its value, as a message starts: {@code VAR=value}, or {@code VAR (set, N characters)} for a secret. */
    public String named(String value) {
        return name() + (isSecret() ? " " : "=") + displayed(value);
    }

    /**
     * True for names that SmallRye's environment rules do not map to the property, so that
     * TorchrunEnvConfigSource maps them by name: torchrun's unprefixed ones, and SYMMEM_STORE (whose
     * property sits beside the store's other settings).
     */
    public boolean isMappedByName() {
        return mappedByName;
    }

    /** True for the variables torchrun sets for every rank (RANK, WORLD_SIZE, MASTER_ADDR, ...). */
    public boolean isTorchrunName() {
        return mappedByName && !name().startsWith("SYMMEM_");
    }

    /**
     * Empty when {@code value} is acceptable for this variable, null meaning unset (its default).
     * Otherwise the problem, one line: {@code VAR=value is invalid: expected <allowed> (<why>)}. An
     * empty (or blank) value is a problem too rather than a second way of saying "unset": it is
     * usually a script's variable that was meant to hold something.
     */
    public Optional<String> problem(String value) {
        if (value == null) {
            return Optional.empty();
        }
        if (value.isBlank()) {
            return Optional.of(named(value) + " is invalid: empty (set it to " + allowed + ", or unset it)");
        }
        return kind.refusal(value).map(why -> named(value) + " is invalid: expected " + allowed
                + (why.isEmpty() ? "" : " (" + why + ")"));
    }

    /** The variable of this environment name, if symmem lists it. */
    public static Optional<ConfigVariable> forName(String name) {
        return Arrays.stream(values()).filter(v -> v.name().equals(name)).findFirst();
    }

    public static Optional<ConfigVariable> forProperty(String property) {
        return Arrays.stream(values()).filter(v -> v.property.equals(property)).findFirst();
    }

    /**
     * The value as it goes into a message: as is when it is plain, else quoted with control characters
     * escaped, so that spaces stay visible and the message stays on one line whatever was set.
     */
    static String shown(String value) {
        if (!value.isEmpty() && value.chars().allMatch(c -> c > ' ' && c < 0x7f && c != '\'' && c != '\\')) {
            return value;
        }
        StringBuilder quoted = new StringBuilder("'");
        for (char c : value.toCharArray()) {
            if (c == '\'' || c == '\\') {
                quoted.append('\\').append(c);
            } else if (Character.isISOControl(c) || Character.getType(c) == Character.LINE_SEPARATOR
                    || Character.getType(c) == Character.PARAGRAPH_SEPARATOR) {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return value.isEmpty() ? "" : quoted.append('\'').toString();
    }
}
