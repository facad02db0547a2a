package io.symmem;

import io.symmem.config.Backend;
import io.symmem.config.ConfigVariable;
import io.symmem.config.StoreHost;
import io.symmem.config.SymmemConfig;
import io.symmem.config.SymmemConfigLoader;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * The front door of symmem as a library: joins this process to its world of ranks and returns the
 * {@link SymmemWorld}, through which groups, symmetric buffers and collectives are reached. Joining is
 * what a service rank does: rank 0 hosts the rendezvous store (or every rank connects to an existing
 * one), every rank opens the backend, joins liveness and meets the others.
 *
 * <pre>{@code
 * try (SymmemWorld world = Symmem.fromEnvironment();           // RANK, WORLD_SIZE, MASTER_ADDR, ...
 *         SymmetricBuffer buffer = world.group().allocate(DType.FLOAT32, 1024)) {
 *     buffer.write(new float[] {world.rank() + 1f});
 *     world.group().allReduce(buffer, ReduceOp.SUM, Algorithm.AUTO);
 * }
 * }</pre>
 *
 * Settings come from the same variables the service reads (torchrun's RANK, WORLD_SIZE, LOCAL_RANK,
 * MASTER_ADDR, MASTER_PORT and symmem's SYMMEM_*; {@code symmem config} lists them), checked the same
 * way: a bad value stops the join with one line per problem naming the variable.
 */
public final class Symmem {
    private Symmem() {
    }

    /**
     * Joins the world this process's environment (and system properties, which win) describes; blocks
     * until every rank has joined or a deadline (SYMMEM_TIMEOUT_STORE, _RENDEZVOUS) passes.
     *
     * @throws io.symmem.config.InvalidConfigurationException naming each bad variable
     */
    public static SymmemWorld fromEnvironment() {
        PlainJavaLogging.choose();
        return SymmemWorld.join(SymmemConfigLoader.fromProcess());
    }

    /** Explicit settings, nothing read from the environment; unset ones take their defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Settings of a world given in code rather than by the environment. Each setting stands for one of
     * the variables {@code symmem config} lists, and is checked by the same rules when {@link #join()}
     * reads them, so errors name that variable (say RANK=3 against WORLD_SIZE=2).
     *
     * <pre>{@code
     * SymmemWorld world = Symmem.builder()
     *         .rank(rank).worldSize(2)
     *         .store("127.0.0.1", 29500)
     *         .backend(Backend.HOST)
     *         .join();
     * }</pre>
     */
    public static final class Builder {
        private final Map<String, String> variables = new LinkedHashMap<>();

        private Builder() {
        }

        /** This process's rank in the world (RANK), 0 .. worldSize - 1. */
        public Builder rank(int rank) {
            return set(ConfigVariable.RANK, Integer.toString(rank));
        }

        /** Number of ranks in the world (WORLD_SIZE). */
        public Builder worldSize(int worldSize) {
            return set(ConfigVariable.WORLD_SIZE, Integer.toString(worldSize));
        }

        /** Rank among the processes of this machine (LOCAL_RANK; default: the rank): picks the GPU. */
        public Builder localRank(int localRank) {
            return set(ConfigVariable.LOCAL_RANK, Integer.toString(localRank));
        }

        /** Where the rendezvous store is served (MASTER_ADDR, MASTER_PORT); by rank 0 unless {@link #storeHost} says otherwise. */
        public Builder store(String host, int port) {
            Objects.requireNonNull(host, "store host must not be null");
            set(ConfigVariable.MASTER_ADDR, host);
            return set(ConfigVariable.MASTER_PORT, Integer.toString(port));
        }

        /**
         * Who serves the store (SYMMEM_STORE_HOST): {@link StoreHost#RANK0} (default), or an existing
         * store every rank connects to: a {@code symmem store} ({@link StoreHost#SYMMEM}) or any
         * TCPStore-compatible server, PyTorch's included ({@link StoreHost#TCPSTORE}).
         */
        public Builder storeHost(StoreHost host) {
            Objects.requireNonNull(host, "storeHost must not be null");
            return set(ConfigVariable.SYMMEM_STORE_HOST, host.id());
        }

        /** The backend of symmetric buffers (SYMMEM_BACKEND; default auto: cuda where every rank has a GPU, else host). */
        public Builder backend(Backend backend) {
            Objects.requireNonNull(backend, "backend must not be null");
            return set(ConfigVariable.SYMMEM_BACKEND, backend.id());
        }

        /** Name of this run (SYMMEM_RUN_ID): its keys go under their own prefix of a store that outlives runs. */
        public Builder runId(String runId) {
            Objects.requireNonNull(runId, "runId must not be null");
            return set(ConfigVariable.SYMMEM_RUN_ID, runId);
        }

        /** Deadline of connecting to the store and of store operations (SYMMEM_TIMEOUT_STORE). */
        public Builder storeTimeout(Duration timeout) {
            return set(ConfigVariable.SYMMEM_TIMEOUT_STORE, duration(timeout));
        }

        /** Deadline of the world's rendezvous, of a group's and of each buffer's (SYMMEM_TIMEOUT_RENDEZVOUS). */
        public Builder rendezvousTimeout(Duration timeout) {
            return set(ConfigVariable.SYMMEM_TIMEOUT_RENDEZVOUS, duration(timeout));
        }

        /** Deadline of one collective (SYMMEM_TIMEOUT_COLLECTIVE). */
        public Builder collectiveTimeout(Duration timeout) {
            return set(ConfigVariable.SYMMEM_TIMEOUT_COLLECTIVE, duration(timeout));
        }

        /** How long a rank may go silent before the others take it for gone (SYMMEM_TIMEOUT_LIVENESS). */
        public Builder livenessTimeout(Duration timeout) {
            return set(ConfigVariable.SYMMEM_TIMEOUT_LIVENESS, duration(timeout));
        }

        /** Any other variable {@code symmem config} lists, as its text (e.g. SYMMEM_POOL_SEGMENT, "16MiB"). */
        public Builder set(ConfigVariable variable, String value) {
            Objects.requireNonNull(variable, "variable must not be null");
            Objects.requireNonNull(value, variable.name() + " must not be null");
            variables.put(variable.name(), value);
            return this;
        }

        /** The settings as the world would use them, checked. */
        public SymmemConfig config() {
            return SymmemConfigLoader.load(Map.copyOf(variables), new Properties());
        }

        /**
         * Joins the world these settings describe (collective: every rank joins); blocks until every rank
         * has joined, or a deadline passes.
         *
         * @throws io.symmem.config.InvalidConfigurationException naming each bad setting by its variable
         */
        public SymmemWorld join() {
            PlainJavaLogging.choose();
            return SymmemWorld.join(config());
        }

        private static String duration(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout must not be null");
            // The variables' own form; a negative or zero value is refused there, naming the variable.
            return timeout.toMillis() + "ms";
        }
    }
}
