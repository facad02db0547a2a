package io.symmem.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.time.Duration;
import java.util.Optional;

/**
 * The configuration of one rank, read once from the environment. The torchrun variables (RANK,
 * WORLD_SIZE, ...) reach these properties through {@link TorchrunEnvConfigSource}; SYMMEM_* variables
 * map onto symmem.* by SmallRye's usual environment rules. {@link ConfigVariable} lists every one and
 * checks each value before this mapping reads it; the converters named here read sizes and booleans
 * by the same rules.
 */
@ConfigMapping(prefix = "symmem")
public interface SymmemConfig {

    /** This process's rank in the world (RANK). */
    @WithDefault("0")
    int rank();

    /** Number of ranks in the world (WORLD_SIZE). */
    @WithName("world-size")
    @WithDefault("1")
    int worldSize();

    /** Rank among the processes of this machine (LOCAL_RANK); defaults to RANK. */
    @WithName("local-rank")
    Optional<Integer> localRank();

    /** Processes on this machine (LOCAL_WORLD_SIZE); defaults to WORLD_SIZE. */
    @WithName("local-world-size")
    Optional<Integer> localWorldSize();

    /** Host of the rendezvous store, served by rank 0 (MASTER_ADDR). */
    @WithName("master-addr")
    @WithDefault("127.0.0.1")
    String masterAddr();

    /** Port of the rendezvous store (MASTER_PORT). */
    @WithName("master-port")
    @WithDefault("29500")
    int masterPort();

    /**
     * Name of this run (SYMMEM_RUN_ID): the rank's own store keys go under symmem/run/&lt;id&gt;/, so runs
     * that share a store which outlives them (SYMMEM_STORE_HOST=symmem or tcpstore) do not meet each
     * other's keys. Unset: the keys are not prefixed.
     */
    @WithName("run-id")
    Optional<String> runId();

    /** Backend of symmetric buffers (SYMMEM_BACKEND): auto, host, cuda, nvshmem or nccl. */
    @WithDefault("auto")
    Backend backend();

    /**
     * Several ranks may share one GPU (SYMMEM_ALLOW_OVERLAPPING_DEVICES): cuda then uses device
     * LOCAL_RANK % device count, and the native import accepts two ranks on one GPU.
     */
    @WithName("allow-overlapping-devices")
    @WithDefault("false")
    @WithConverter(BooleanKind.Converter.class)
    boolean allowOverlappingDevices();

    /** NVLink multicast is reported as disabled (SYMMEM_DISABLE_MULTICAST); the native core reads it too. */
    @WithName("disable-multicast")
    @WithDefault("false")
    @WithConverter(BooleanKind.Converter.class)
    boolean disableMulticast();

    Timeouts timeout();

    Http http();

    Store store();

    Nvshmem nvshmem();

    Pool pool();

    /** The memory pool's settings (docs/mempool.md). */
    interface Pool {
        /** Bytes of each symmetric segment a pool adds (SYMMEM_POOL_SEGMENT); rounded up to 4 KiB. */
        @WithDefault("64MiB")
        @WithConverter(LongByteSizeConverter.class)
        long segment();

        /** The most a pool may reserve per rank (SYMMEM_POOL_LIMIT); empty: no limit but the memory. */
        @WithConverter(LongByteSizeConverter.class)
        Optional<Long> limit();

        /** Compare the ranks' allocation sequences at every allocation, not only at segments (SYMMEM_POOL_STRICT). */
        @WithDefault("false")
        @WithConverter(BooleanKind.Converter.class)
        boolean strict();
    }

    interface Timeouts {
        /** Deadline of store operations and of connecting to the store (SYMMEM_TIMEOUT_STORE). */
        @WithDefault("60s")
        Duration store();

        /** Deadline of a rendezvous: the world's, and each buffer's (SYMMEM_TIMEOUT_RENDEZVOUS). */
        @WithDefault("60s")
        Duration rendezvous();

        /** Deadline of barriers and signal waits (SYMMEM_TIMEOUT_BARRIER). */
        @WithDefault("30s")
        Duration barrier();

        /**
         * Deadline of one collective (all-reduce, all-gather, reduce-scatter) on symmetric buffers
         * (SYMMEM_TIMEOUT_COLLECTIVE), separate from the rendezvous deadline: a dead peer is found by
         * liveness long before, so this only bounds a peer that is alive but never arrives.
         */
        @WithDefault("60s")
        Duration collective();

        /**
         * How long a rank may go silent before the others take it for gone (SYMMEM_TIMEOUT_LIVENESS):
         * the bound of heartbeat-based detection. A killed rank is usually noticed at once, when the
         * store sees its connection close; heartbeats catch the rest (a rank that hangs, a store
         * server that cannot watch connections).
         */
        @WithDefault("3s")
        Duration liveness();
    }

    interface Http {
        /** Base HTTP port; a rank serves on base + LOCAL_RANK (SYMMEM_HTTP_PORT). */
        @WithDefault("8700")
        int port();

        /** Interface the HTTP server binds (SYMMEM_HTTP_HOST): the pod's own processes only, by default. */
        @WithDefault("127.0.0.1")
        String host();

        /** Largest request body read (SYMMEM_HTTP_MAX_BODY_BYTES). */
        @WithName("max-body-bytes")
        @WithDefault("16777216")
        @WithConverter(IntByteSizeConverter.class)
        int maxBodyBytes();
    }

    Management management();

    /** Health and metrics, on a port of their own (Quarkus' management interface). */
    interface Management {
        /** Base port; a rank serves on base + LOCAL_RANK, or on a free port when 0 (SYMMEM_MANAGEMENT_PORT). */
        @WithDefault("9700")
        int port();

        /** Interface (SYMMEM_MANAGEMENT_HOST): every one, for the kubelet's probes and Prometheus. */
        @WithDefault("0.0.0.0")
        String host();
    }

    Api api();

    interface Api {
        /** When set, every /v1 route needs it as a bearer token (SYMMEM_API_TOKEN). */
        Optional<String> token();
    }

    /**
     * Limits of the rank's store: rank 0's server refuses larger frames (closing that connection) and
     * every rank's client refuses to send them. Every rank must use the same values.
     */
    interface Store {
        /** Who serves the store (SYMMEM_STORE_HOST): rank0, symmem (a `symmem store`) or tcpstore. */
        @WithDefault("rank0")
        StoreHost host();

        /**
         * The store on an etcd cluster (SYMMEM_STORE=etcd://host:port[,host:port...]/prefix); when set, no
         * rank hosts a store and MASTER_ADDR:MASTER_PORT is not used for it.
         */
        @WithName("url")
        Optional<String> url();

        /**
         * Where the rank that hosts the store writes the port it bound, once it listens (SYMMEM_STORE_PORT_FILE):
         * with MASTER_PORT=0, the other ranks read it there (a launcher starts them all at once).
         */
        @WithName("port-file")
        Optional<String> portFile();

        /** Most bytes of one key (SYMMEM_STORE_MAX_KEY_BYTES): a size, e.g. 4096 or 4KiB. */
        @WithName("max-key-bytes")
        @WithDefault("4096")
        @WithConverter(IntByteSizeConverter.class)
        int maxKeyBytes();

        /** Most bytes of one value (SYMMEM_STORE_MAX_VALUE_BYTES): a size, e.g. 64MiB. */
        @WithName("max-value-bytes")
        @WithDefault("67108864")
        @WithConverter(IntByteSizeConverter.class)
        int maxValueBytes();

        /** Most keys in one CHECK, WAIT or multi-key request (SYMMEM_STORE_MAX_KEYS_PER_REQUEST). */
        @WithName("max-keys-per-request")
        @WithDefault("65536")
        int maxKeysPerRequest();
    }

    /** symmem's own settings of the NVSHMEM backend; NVSHMEM's variables are {@link NvshmemConfig}'s. */
    interface Nvshmem {
        /**
         * Symmetric heap per rank in bytes (SYMMEM_NVSHMEM_HEAP_SIZE), exported as NVSHMEM_SYMMETRIC_SIZE
         * unless that is set (see {@link NvshmemEnvironment}); empty: NVSHMEM's default.
         */
        @WithName("heap-size")
        @WithConverter(LongByteSizeConverter.class)
        Optional<Long> heapSize();

        /** Directory searched first for libnvshmem_host (SYMMEM_NVSHMEM_HOME): see {@link NvshmemLibraryLocator}. */
        Optional<String> home();
    }

    /** The etcd cluster that keeps the store (SYMMEM_STORE), if one does. */
    default Optional<io.symmem.store.etcd.EtcdTarget> etcdStore() {
        return store().url().map(io.symmem.store.etcd.EtcdTarget::parse);
    }

    /** True when this rank must host the store in its own process (never with an etcd store). */
    default boolean hostsStore() {
        return store().url().isEmpty() && store().host().hostedBy(rank());
    }

    default int effectiveLocalRank() {
        return localRank().orElse(rank());
    }

    default int effectiveLocalWorldSize() {
        return localWorldSize().orElse(worldSize());
    }
}
