package io.symmem.config;

import java.util.Arrays;
import java.util.Optional;

/**
 * Every environment variable symmem reads, with the property it feeds and what it allows. Error
 * messages and the effective-configuration listing name variables through this table, so a user
 * always sees the name they set.
 */
public enum ConfigVariable {
    RANK("symmem.rank", "an integer with 0 <= RANK < WORLD_SIZE", true),
    WORLD_SIZE("symmem.world-size", "an integer >= 1", true),
    LOCAL_RANK("symmem.local-rank", "an integer with 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE", true),
    LOCAL_WORLD_SIZE("symmem.local-world-size", "an integer with 1 <= LOCAL_WORLD_SIZE <= WORLD_SIZE", true),
    MASTER_ADDR("symmem.master-addr", "a host name or IP address", true),
    MASTER_PORT("symmem.master-port", "a TCP port, 1..65535", true),
    SYMMEM_RUN_ID("symmem.run-id", "1 to 128 letters, digits, '.', '_' or '-'", false),
    SYMMEM_BACKEND("symmem.backend", "one of auto, host, cuda", false),
    SYMMEM_ALLOW_OVERLAPPING_DEVICES("symmem.allow-overlapping-devices",
            "true or false (1/0, yes/no); true lets several ranks share a GPU (device LOCAL_RANK % device count)", false),
    SYMMEM_DISABLE_MULTICAST("symmem.disable-multicast",
            "true or false (1/0, yes/no); true reports NVLink multicast as disabled (symmem never uses it)", false),
    SYMMEM_TIMEOUT_STORE("symmem.timeout.store", "a positive duration such as 30s, 500ms or PT1M", false),
    SYMMEM_TIMEOUT_RENDEZVOUS("symmem.timeout.rendezvous", "a positive duration such as 30s, 500ms or PT1M", false),
    SYMMEM_TIMEOUT_BARRIER("symmem.timeout.barrier", "a positive duration such as 30s, 500ms or PT1M", false),
    SYMMEM_TIMEOUT_COLLECTIVE("symmem.timeout.collective", "a positive duration such as 30s, 500ms or PT1M", false),
    SYMMEM_TIMEOUT_LIVENESS("symmem.timeout.liveness", "a duration between 300ms and 10m such as 3s; a rank silent "
            + "this long is taken for gone", false),
    SYMMEM_HTTP_PORT("symmem.http.port", "a TCP port, 1..65535; a rank serves on SYMMEM_HTTP_PORT + LOCAL_RANK", false),
    SYMMEM_HTTP_HOST("symmem.http.host", "an interface address such as 127.0.0.1 or 0.0.0.0", false),
    SYMMEM_STORE_HOST("symmem.store.host", "one of rank0 (rank 0 hosts the store), symmem (a `symmem store` process "
            + "at MASTER_ADDR:MASTER_PORT), tcpstore (any TCPStore server there, PyTorch's included)", false),
    SYMMEM_STORE_MAX_KEY_BYTES("symmem.store.max-key-bytes", "a size from 1 to " + Limits.MAX_KEY_BYTES
            + " bytes (1 MiB): bytes, or with a unit such as 4KiB", false),
    SYMMEM_STORE_MAX_VALUE_BYTES("symmem.store.max-value-bytes", "a size from 1 to " + Integer.MAX_VALUE
            + " bytes (2 GiB - 1): bytes, or with a unit such as 64MiB (KiB/MiB/GiB = 1024^n, KB/MB/GB = 1000^n)", false),
    SYMMEM_STORE_MAX_KEYS_PER_REQUEST("symmem.store.max-keys-per-request", "an integer, 1.." + Limits.MAX_KEYS_PER_REQUEST, false);

    /** Upper bounds of the store limits (a key or a key list the server must hold in memory at once). */
    public static final class Limits {
        public static final int MAX_KEY_BYTES = 1 << 20;
        public static final int MAX_KEYS_PER_REQUEST = 1 << 24;

        private Limits() {
        }
    }

    private final String property;
    private final String allowed;
    private final boolean torchrunName;

    ConfigVariable(String property, String allowed, boolean torchrunName) {
        this.property = property;
        this.allowed = allowed;
        this.torchrunName = torchrunName;
    }

    /** The SmallRye property this variable sets. */
    public String property() {
        return property;
    }

    /** What values are allowed, in words. */
    public String allowed() {
        return allowed;
    }

    /** True for torchrun's unprefixed names, which SmallRye's environment rules do not map. */
    public boolean isTorchrunName() {
        return torchrunName;
    }

    public static Optional<ConfigVariable> forProperty(String property) {
        return Arrays.stream(values()).filter(v -> v.property.equals(property)).findFirst();
    }
}
