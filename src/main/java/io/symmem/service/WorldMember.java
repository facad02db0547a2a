package io.symmem.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.symmem.config.Backend;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.StoreHost;
import io.symmem.config.SymmemConfig;
import io.symmem.config.SymmemConfigValidator;
import io.symmem.liveness.GuardedStore;
import io.symmem.liveness.Liveness;
import io.symmem.liveness.LeaseMembers;
import io.symmem.liveness.LivenessAgent;
import io.symmem.liveness.WorldFailure;
import io.symmem.memory.HostIdentity;
import io.symmem.memory.SymmetricAllocator;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nccl.Nccl;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclVersion;
import io.symmem.store.EventBusStore;
import io.symmem.store.LiveKeys;
import io.symmem.store.PrefixStore;
import io.symmem.store.SideConnectionStore;
import io.symmem.store.SideConnections;
import io.symmem.store.Store;
import io.symmem.store.StoreEventBusService;
import io.symmem.store.StoreException;
import io.symmem.store.StoreExchange;
import io.symmem.store.StoreLimits;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.etcd.EtcdStore;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * This process as one rank of its world, in plain Java: hosts the store (rank 0 unless
 * SYMMEM_STORE_HOST says otherwise), connects to it, joins liveness, opens the backend and performs the
 * world rendezvous; at the end leaves in order and closes. The service's {@link RankRuntime} (a CDI
 * bean) and the library's façade ({@code io.symmem.Symmem}) both join through it, so that a library
 * user gets the same store hosting, backend choice and fail-fast liveness as a service rank.
 *
 * <p>Inside the rank every component reaches the store through the event bus ({@link EventBusStore} to
 * address {@code symmem.store}); the rank serves that address from the server's in-process
 * {@link io.symmem.store.LocalStore} on rank 0 and, on the other ranks, from one pipelined
 * {@link TcpStoreClient}, its waits and ADDs on side connections ({@link SideConnectionStore}).
 *
 * <pre>{@code
 * WorldMember member = new WorldMember(SymmemConfigLoader.fromProcess(), Vertx.vertx(), new ObjectMapper(), 0,
 *         new WorldMember.Events() { });
 * member.join();
 * try (SymmetricMemory m = member.allocator().allocate(member.world(), 1 << 20, Duration.ofSeconds(30))) { ... }
 * member.leave();
 * member.close();
 * }</pre>
 */
public final class WorldMember implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(WorldMember.class);
    private static final String LEFT_PREFIX = "symmem/world/left/";
    private static final String RUN_PREFIX = "symmem/run/";
    /** Counted up once by every rank that joins: more joins than ranks means the keys are not this run's. */
    static final String JOINS_KEY = "symmem/world/joins";
    /** Where a rank's own keys live when no SYMMEM_RUN_ID prefixes them: StoreExchange's, the world's, liveness'. */
    private static final List<String> RUN_KEY_PREFIXES = List.of("symmem/ex/", "symmem/world/", "symmem/live/");

    /**
     * After a failed join the host keeps serving this long before it closes the store: the other ranks'
     * deadlines fall a moment later (they started later), and they need the store to find out which
     * ranks are missing rather than only that the store is gone.
     */
    private static final Duration FAILED_HOST_LINGER = Duration.ofSeconds(3);

    /**
     * What the owner of a member hears about (the service: metrics, readiness, world events).
     *
     * <pre>{@code
     * new WorldMember(config, vertx, json, 0, new WorldMember.Events() {
     *     public void worldFailed(WorldFailure failure) {
     *         System.err.println("world lost: " + failure.reason());
     *     }
     * });
     * }</pre>
     */
    public interface Events {
        /** This rank now serves the store (before it connects to it). */
        default void storeHosted(StoreServer server) {
        }

        /** The world failed; the native waits have been aborted already. */
        default void worldFailed(WorldFailure failure) {
        }

        /**
         * An entry of the world log: a rank joined, became ready, left or is gone (this rank's own
         * entries included), in log order, on a liveness thread; must not block.
         */
        default void worldRecord(LiveKeys.WorldRecord record) {
        }
    }

    private final SymmemConfig config;
    private final Vertx vertx;
    private final ObjectMapper json;
    private final int httpPort;
    private final Events events;

    private volatile StoreServer server;
    /** What the event-bus service forwards to: the LocalStore (rank 0) or the TCP clients (shared + waits). */
    private Store storeBackend;
    /** The client of a store on etcd (SYMMEM_STORE); null for a TCP store. */
    private EtcdStore etcdStore;
    /** The shared connection of a rank that reaches the store over TCP; null on the hosting rank. */
    private TcpStoreClient sharedStoreClient;
    private StoreEventBusService storeService;
    private volatile Store store;
    /** The store under this run's prefix (SYMMEM_RUN_ID), or the store itself: the rank's own keys go here. */
    private volatile Store runStore;
    private volatile NativeBackend backend;
    private volatile NvshmemStartup nvshmem;
    private volatile NcclGroups ncclGroups;
    private volatile StoreExchange world;
    private volatile SymmetricAllocator allocator;
    private volatile List<PeerInfo> peers = List.of();
    private volatile Liveness liveness;
    private LivenessAgent livenessAgent;
    /** The liveness connections of a rank that does not host the store (closed at stop). */
    private final List<Store> livenessConnections = new ArrayList<>();
    private volatile boolean joined;
    /** The join failed, or the world did before the join ended: the hosting rank lingers at close. */
    private volatile boolean failedBeforeJoined;
    private boolean closed;

    /**
     * @param httpPort the port this rank serves HTTP on, shown to its peers; 0 where it serves none
     */
    public WorldMember(SymmemConfig config, Vertx vertx, ObjectMapper json, int httpPort, Events events) {
        this.config = config;
        this.vertx = vertx;
        this.json = json;
        this.httpPort = httpPort;
        this.events = events;
    }

    public SymmemConfig config() {
        return config;
    }

    /** Joins the world; blocks until joined, or throws the reason it could not (each step has its deadline). */
    public void join() throws IOException {
        try {
            List<String> problems = SymmemConfigValidator.problems(config);
            if (!problems.isEmpty()) {
                throw new InvalidConfigurationException(problems);
            }
            Duration storeTimeout = config.timeout().store();
            if (config.hostsStore()) {
                server = new StoreServer(vertx, storeLimits(config));
                int port = server.listen(config.masterAddr(), config.masterPort()).await().atMost(storeTimeout);
                LOG.infof("rank 0 hosts the store at %s", storeAddress());
                if (config.store().portFile().isPresent()) {
                    publishPort(Path.of(config.store().portFile().get()), port);
                }
                events.storeHosted(server);
            }
            liveness = new Liveness(config.rank());
            liveness.whenFailed(this::worldFailed);
            connectStore(storeTimeout);
            runStore = runScoped(store);
            checkFirstJoin(storeTimeout);
            startLiveness(storeTimeout);
            world = new StoreExchange(runStore, RankRuntime.WORLD, config.rank(), config.worldSize());
            if (config.backend() == Backend.AUTO) {
                peers = joinAuto(config.timeout().rendezvous());
            } else if (config.backend() == Backend.NVSHMEM) {
                peers = joinNvshmem(config.timeout().rendezvous());
            } else if (config.backend() == Backend.NCCL) {
                peers = joinNccl(config.timeout().rendezvous());
            } else {
                backend = BackendSelector.openExplicit(config.backend(), config.effectiveLocalRank(),
                        config.allowOverlappingDevices());
                peers = rendezvous(mine(backend.name(), backend.device(), backend.deviceName(), NativeCore.cudaDeviceCount()),
                        config.timeout().rendezvous());
            }
            allocator = new SymmetricAllocator(backend, config.timeout().barrier(),
                    nvshmem == null ? null : nvshmem.world(), ncclGroups);
            livenessAgent.startMonitoring();
            joined = true;
            livenessAgent.publishReady();
            LOG.infof("rank %d of %d joined the world (backend %s, device %s)", config.rank(), config.worldSize(),
                    backend.name(), backend.deviceName());
        } catch (RuntimeException | IOException e) {
            failedBeforeJoined = true;
            if (livenessAgent != null) {
                livenessAgent.close();
            }
            LOG.errorf("rank %d failed to join the world: %s", config.rank(), e.getMessage());
            throw e;
        }
    }

    public boolean joined() {
        return joined;
    }

    public List<PeerInfo> peers() {
        return peers;
    }

    /** This rank's view of its world's health; null before the rank reached the store. */
    public Liveness liveness() {
        return liveness;
    }

    public NativeBackend backend() {
        return backend;
    }

    /** The world's exchange (group {@code world}, every rank). */
    public StoreExchange world() {
        return world;
    }

    public SymmetricAllocator allocator() {
        return allocator;
    }

    /**
     * MASTER_ADDR:port, the port the store was bound to where this rank hosts it (MASTER_PORT may be 0);
     * for a store on etcd, SYMMEM_STORE's address.
     */
    public String storeAddress() {
        if (config.store().url().isPresent()) {
            return config.etcdStore().orElseThrow().describe();
        }
        StoreServer hosted = server;
        return config.masterAddr() + ":" + (hosted != null && hosted.port() > 0 ? hosted.port() : config.masterPort());
    }

    /**
     * Writes the store's port to {@code file} (SYMMEM_STORE_PORT_FILE) in one step: written beside it, then
     * renamed over it, so that a reader polling for the file never reads it half written.
     */
    static void publishPort(Path file, int port) throws IOException {
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        Files.writeString(partial, port + "\n");
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The store as components use it (through the event bus); null until this rank has reached it. */
    public Store store() {
        return store;
    }

    /** The store under this run's prefix (SYMMEM_RUN_ID), or the store itself; null until reached. */
    public Store runStore() {
        return runStore;
    }

    /** The store server when this rank hosts it (rank 0, once started); null otherwise. */
    public StoreServer storeServer() {
        return server;
    }

    /** The NCCL communicators of this rank's groups; null unless SYMMEM_BACKEND=nccl. */
    public NcclGroups ncclGroups() {
        return ncclGroups;
    }

    /** NVSHMEM as this rank loaded and joined it; null unless SYMMEM_BACKEND=nvshmem. */
    public NvshmemStartup nvshmem() {
        return nvshmem;
    }

    /** A new exchange for a group of this world (its own key scope and rounds). */
    public StoreExchange exchange(String group, int rank, int worldSize) {
        return new StoreExchange(runStore, group, rank, worldSize);
    }

    /** The store limits the configuration asks for (SYMMEM_STORE_MAX_*): a rank's, and `symmem store`'s. */
    public static StoreLimits storeLimits(SymmemConfig config) {
        return new StoreLimits(config.store().maxKeyBytes(), config.store().maxValueBytes(), config.store().maxKeysPerRequest());
    }

    /** The store under this run's prefix (SYMMEM_RUN_ID), or the store itself. */
    private Store runScoped(Store base) {
        return config.runId().<Store>map(id -> new PrefixStore(RUN_PREFIX + id, base)).orElse(base);
    }

    /** What {@link #runScoped} puts before a key: the run's prefix and '/', or nothing. */
    private String runScope() {
        return config.runId().map(id -> RUN_PREFIX + id + "/").orElse("");
    }

    /**
     * Liveness runs on connections of its own: one holds the member key, the departure WAIT and the
     * beats; the other the monitor's reads. On the hosting rank both are the in-process store.
     */
    private void startLiveness(Duration storeTimeout) {
        boolean hostedByRank0 = config.store().host() == StoreHost.RANK0 && etcdStore == null;
        Store eventsStore;
        Store probe;
        TcpStoreClient eventsClient = null;
        if (etcdStore != null) {
            // One etcd client multiplexes every call: a watch never holds up a read.
            eventsStore = runScoped(etcdStore);
            probe = eventsStore;
        } else if (server != null) {
            eventsStore = runScoped(server.localStore());
            probe = eventsStore;
        } else {
            eventsClient = connectTcp(storeTimeout);
            livenessConnections.add(eventsClient);
            Store probeClient = connectTcp(storeTimeout);
            livenessConnections.add(probeClient);
            eventsStore = runScoped(eventsClient);
            probe = runScoped(probeClient);
        }
        livenessAgent = new LivenessAgent(liveness, eventsStore, probe, config.worldSize(), config.timeout().liveness(),
                storeAddress(), hostedByRank0, events::worldRecord);
        if (etcdStore != null) {
            livenessAgent.useLeases(new LeaseMembers(etcdStore, runScope()));
        }
        if (eventsClient != null) {
            eventsClient.whenConnectionLost(livenessAgent::connectionLost);
        }
        livenessAgent.start(storeTimeout);
    }

    /**
     * The world can no longer work: every store wait is cut short through the guarded store, native
     * waits and kernels through the native core's abort; then the owner hears of it.
     */
    private void worldFailed(WorldFailure failure) {
        try {
            NativeCore.abort(failure.reason());
        } catch (RuntimeException e) {
            LOG.warnf("could not abort the native waits: %s", e.getMessage());
        }
        if (!joined) {
            failedBeforeJoined = true;
        }
        events.worldFailed(failure);
    }

    /**
     * A store that outlives a run (a `symmem store` sidecar, a TCPStore) still holds the previous run's
     * world keys; joining on top of them would pair this rank with ranks that are gone. Every rank counts
     * itself in; a count above the world size means this run's keys were used before.
     */
    private void checkFirstJoin(Duration storeTimeout) {
        long joins = runStore.add(JOINS_KEY, 1).await().atMost(storeTimeout.plusSeconds(5));
        if (joins > config.worldSize()) {
            throw new IllegalStateException("the store at " + storeAddress() + " has seen " + joins + " world joins for "
                    + config.worldSize() + " ranks" + config.runId().map(id -> " under SYMMEM_RUN_ID=" + id).orElse("")
                    + ": it holds the keys of an earlier run. Give every run its own SYMMEM_RUN_ID when the store outlives runs"
                    + " (SYMMEM_STORE_HOST=" + config.store().host().id() + "), or restart the store");
        }
    }

    /** The store backend of this rank, served on the event bus, and the EventBusStore every component uses. */
    private void connectStore(Duration storeTimeout) {
        if (server != null) {
            storeBackend = server.localStore();
        } else if (config.store().url().isPresent()) {
            // The rank's lease (its member key's, see LeaseMembers) expires one liveness bound after the
            // rank stops renewing it; etcd rounds a TTL up to whole seconds.
            etcdStore = EtcdStore.connect(config.etcdStore().orElseThrow(), storeTimeout, storeLimits(config),
                    config.timeout().liveness());
            storeBackend = etcdStore;
        } else {
            // A wait holds its connection until answered, and an ADD on a non-integer value costs it: on
            // the shared one either would hold up or fail every other request of the rank (HTTP callers'
            // included), so they run on side connections.
            sharedStoreClient = connectTcp(storeTimeout);
            storeBackend = new SideConnectionStore(sharedStoreClient, new SideConnections(() -> connectTcpAsync(storeTimeout)));
        }
        storeService = new StoreEventBusService(vertx, storeBackend);
        storeService.register().await().atMost(storeTimeout);
        EventBusStore viaBus = new EventBusStore(vertx, storeAddress(), storeTimeout);
        viaBus.ping().await().atMost(storeTimeout.plusSeconds(5));
        store = new GuardedStore(viaBus, liveness);
    }

    /** A new connection to the store at MASTER_ADDR:MASTER_PORT, as SYMMEM_STORE_HOST says to talk to it. */
    private TcpStoreClient connectTcp(Duration storeTimeout) {
        return connectTcpAsync(storeTimeout).await().atMost(storeTimeout.plusSeconds(5));
    }

    private Uni<TcpStoreClient> connectTcpAsync(Duration storeTimeout) {
        // Our StoreServer (rank 0's, or a `symmem store`) holds requests behind a pending WAIT, so a get
        // is one round trip (WAIT+GET in one write); any other TCPStore server gets one request at a time.
        TcpStoreClient.Options options = config.store().host() == StoreHost.TCPSTORE
                ? TcpStoreClient.Options.defaults() : TcpStoreClient.Options.forSymmemServer();
        return TcpStoreClient.connect(vertx, config.masterAddr(), config.masterPort(), storeTimeout,
                options.withLimits(storeLimits(config)));
    }

    /**
     * SYMMEM_BACKEND=nvshmem: NVSHMEM is loaded (or the rank stops, listing where it looked) before the
     * world rendezvous, then joined by unique id through the store, then the backend opened on it.
     */
    private List<PeerInfo> joinNvshmem(Duration timeout) throws IOException {
        int device = BackendSelector.explicitDevice(Backend.NVSHMEM, config.effectiveLocalRank(),
                config.allowOverlappingDevices());
        NvshmemStartup startup = NvshmemStartup.load(System.getenv());
        List<PeerInfo> gathered = rendezvous(mine(Backend.NVSHMEM.id(), device, BackendSelector.deviceName(device),
                NativeCore.cudaDeviceCount()), timeout);
        startup.join(name -> new StoreExchange(runStore, name, config.rank(), config.worldSize()), config.rank(),
                config.worldSize(), device, NvshmemStartup.sharedGpus(gathered), timeout);
        nvshmem = startup;
        backend = new NativeBackend("nvshmem", device);
        return gathered;
    }

    /**
     * SYMMEM_BACKEND=nccl: NCCL is loaded and checked for symmetric windows (2.27+) before the world
     * rendezvous (a rank without it stops, saying where it looked), then the world's communicator is
     * made through the store and the backend opened; every buffer becomes a window of its group's
     * communicator.
     */
    private List<PeerInfo> joinNccl(Duration timeout) throws IOException {
        int device = BackendSelector.ncclDevice(config.effectiveLocalRank(), config.allowOverlappingDevices());
        NcclVersion version;
        try {
            version = Nccl.load();
        } catch (RuntimeException e) {
            throw new IllegalStateException("SYMMEM_BACKEND=nccl: " + e.getMessage(), e);
        }
        if (!version.atLeast(2, 27)) {
            throw new IllegalStateException("SYMMEM_BACKEND=nccl: NCCL " + version + " from " + Nccl.libraryPath()
                    + " has no symmetric windows (ncclCommWindowRegister needs 2.27 or later); set SYMMEM_NCCL_LIBRARY "
                    + "to a newer libnccl.so.2");
        }
        List<PeerInfo> gathered = rendezvous(mine(Backend.NCCL.id(), device, BackendSelector.deviceName(device),
                NativeCore.cudaDeviceCount()), timeout);
        NcclGroups groups = new NcclGroups(device, config.timeout().collective());
        groups.communicator(world, timeout);
        ncclGroups = groups;
        backend = new NativeBackend("nccl", device);
        LOG.infof("NCCL %s from %s: world communicator ready on device %d", version, Nccl.libraryPath(), device);
        return gathered;
    }

    private PeerInfo mine(String backendName, int device, String deviceName, int cudaDevices) {
        return new PeerInfo(config.rank(), config.effectiveLocalRank(), HostIdentity.id(),
                ProcessHandle.current().pid(), httpPort, backendName, device, deviceName, cudaDevices);
    }

    /**
     * SYMMEM_BACKEND=auto: every rank publishes the CUDA device it would use (or -1); after the
     * gather all ranks take the same decision: cuda if every rank has one, else host, logged with why.
     */
    private List<PeerInfo> joinAuto(Duration timeout) throws IOException {
        BackendSelector.CudaCandidate candidate = BackendSelector.candidate(config.effectiveLocalRank(),
                config.allowOverlappingDevices());
        List<PeerInfo> gathered = rendezvous(mine(Backend.AUTO.id(), candidate.device(), candidate.deviceName(),
                candidate.deviceCount()), timeout);
        String reason = BackendSelector.autoFallbackReason(gathered);
        List<PeerInfo> decided = new ArrayList<>(gathered.size());
        if (reason == null) {
            backend = new NativeBackend("cuda", candidate.device());
            LOG.infof("SYMMEM_BACKEND=auto: every rank has a CUDA device, using cuda (device %d, %s)", backend.device(),
                    backend.deviceName());
            for (PeerInfo p : gathered) {
                decided.add(p.withBackend("cuda", p.device(), p.deviceName()));
            }
        } else {
            backend = new NativeBackend("host", -1);
            if (candidate.deviceCount() > 0) {
                LOG.warnf("SYMMEM_BACKEND=auto: every rank falls back to the host backend: %s", reason);
            } else {
                LOG.infof("SYMMEM_BACKEND=auto: using the host backend (%s)", reason);
            }
            for (PeerInfo p : gathered) {
                decided.add(p.withBackend("host", -1, "cpu"));
            }
        }
        return List.copyOf(decided);
    }

    private List<PeerInfo> rendezvous(PeerInfo mine, Duration timeout) throws IOException {
        List<byte[]> all = world.allGather(json.writeValueAsBytes(mine), timeout).await().atMost(timeout.plusSeconds(5));
        List<PeerInfo> result = new ArrayList<>(all.size());
        for (byte[] bytes : all) {
            result.add(json.readValue(bytes, PeerInfo.class));
        }
        return List.copyOf(result);
    }

    /**
     * Leaves the world in order: every rank reports that it no longer needs the store, and rank 0,
     * which hosts it, waits for those reports (up to the store deadline) before it may shut down.
     * Only a joined rank leaves; otherwise this does nothing.
     */
    public void leave() {
        leave(config.timeout().store());
    }

    /**
     * As {@link #leave()}, rank 0 waiting at most {@code waitForOthers} for the other ranks' reports (a
     * rank stopped from outside, as Kubernetes stops a pod, has a grace period to keep).
     */
    public void leave(Duration waitForOthers) {
        if (!joined) {
            return;
        }
        Duration timeout = config.timeout().store();
        if (nvshmem != null) {
            nvshmem.finalizeWorld(config.timeout().rendezvous());
        }
        if (ncclGroups != null) {
            ncclGroups.close();  // collective: every rank leaves, and finalize waits for the peers
        }
        if (config.rank() != 0) {
            livenessAgent.leave(timeout);
            if (sharedStoreClient != null) {
                // Rank 0 may close the store as soon as it reads the key below: no reconnecting then,
                // so that what is still pending fails at once instead of waiting for a store that is gone.
                sharedStoreClient.whenConnectionLost(sharedStoreClient::close);
            }
            runStore.set(LEFT_PREFIX + config.rank(), new byte[] {1}).await().atMost(timeout);
            confirmLeft(timeout);
            disconnectFromStore();
            return;
        }
        List<String> others = new ArrayList<>();
        for (int r = 1; r < config.worldSize(); r++) {
            others.add(LEFT_PREFIX + r);
        }
        if (!others.isEmpty()) {
            try {
                runStore.await(others, waitForOthers).await().atMost(waitForOthers.plusSeconds(5));
            } catch (RuntimeException e) {
                // Leaving anyway: the ranks still running lose the store with this process, and say so.
                LOG.warnf("rank 0 leaves before every other rank reported that it left: %s", e.getMessage());
            }
        }
        livenessAgent.leave(timeout);
        if (!config.hostsStore()) {
            // The store outlives this run: every rank is done with it, so take this run's keys away
            // (a long-lived store would otherwise grow by every run, and the run id can be used again).
            try {
                int removed = removeRunKeys(timeout);
                LOG.infof("removed this run's %d keys from the store at %s", removed, storeAddress());
            } catch (RuntimeException e) {
                // The run itself is done; only the tidying failed (e.g. a server without LIST_KEYS).
                LOG.warnf("could not remove this run's keys from the store at %s (they stay until it restarts): %s",
                        storeAddress(), e.getMessage());
            }
        }
        disconnectFromStore();
    }

    /**
     * Waits for an answer on the connection that sent this rank's "left" key: a SET has no answer of its
     * own, and closing the connection before the server read it would drop it. Rank 0 may shut the store
     * down as soon as it has read the key, before the answer goes out; a connection that ends then means
     * the same as the answer (either rank 0 saw the key or it is gone itself), so it is not an error.
     */
    private void confirmLeft(Duration timeout) {
        try {
            runStore.ping().await().atMost(timeout);
        } catch (StoreException e) {
            LOG.debugf("store %s went away while this rank left (rank 0 closes it once every rank has left): %s",
                    storeAddress(), e.getMessage());
        }
    }

    /**
     * After leaving, this rank needs the store no more: close its connection now, so that the store
     * going away (rank 0 exits) is not taken for a lost connection to re-establish. A hosting rank keeps
     * its server until it stops.
     */
    private void disconnectFromStore() {
        livenessConnections.forEach(Store::close);
        if (server == null && storeBackend != null) {
            storeBackend.close();
        }
    }

    /** Deletes the keys this run wrote (under its SYMMEM_RUN_ID, or symmem's own prefixes without one). */
    private int removeRunKeys(Duration timeout) {
        List<String> mine = runStore.listKeys().await().atMost(timeout).stream()
                .filter(key -> config.runId().isPresent() || RUN_KEY_PREFIXES.stream().anyMatch(key::startsWith))
                .toList();
        int batch = 256; // pipelined deletes, a bounded number in flight
        for (int from = 0; from < mine.size(); from += batch) {
            List<Uni<Boolean>> deletes = mine.subList(from, Math.min(mine.size(), from + batch)).stream()
                    .map(runStore::delete).toList();
            Uni.join().all(deletes).andFailFast().await().atMost(timeout);
        }
        return mine.size();
    }

    /**
     * Releases what the rank holds: liveness, the store connections (and the server it hosts), NCCL's
     * communicators and the backend. A hosting rank whose join failed serves a moment longer first, so
     * that the other ranks can name who is missing. Does not leave the world: {@link #leave} first for
     * an orderly end.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (server != null && failedBeforeJoined) {
            LOG.infof("keeping the store at %s up for %s so that the other ranks can name who is missing",
                    storeAddress(), FAILED_HOST_LINGER);
            try {
                Thread.sleep(FAILED_HOST_LINGER.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (livenessAgent != null) {
            livenessAgent.close();
        }
        livenessConnections.forEach(Store::close);
        if (storeService != null) {
            try {
                storeService.close();
            } catch (RuntimeException e) {
                LOG.debugf("store service did not unregister cleanly: %s", e.getMessage());
            }
        }
        if (storeBackend != null) {
            storeBackend.close();
        }
        if (server != null) {
            server.close();
        }
        if (ncclGroups != null) {
            try {
                ncclGroups.close();
            } catch (RuntimeException e) {
                LOG.infof("NCCL communicators closed with an error: %s", e.getMessage());
            }
        }
        if (backend != null) {
            backend.close();
        }
        if (nvshmem != null && !nvshmem.finalized()) {
            LOG.infof("NVSHMEM left unfinalized: this rank stopped without leaving the world in order");
        }
    }
}
