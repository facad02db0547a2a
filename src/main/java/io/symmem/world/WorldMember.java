package io.symmem.world;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfig;
import io.symmem.config.SymmemConfigValidator;
import io.symmem.liveness.GuardedStore;
import io.symmem.liveness.Liveness;
import io.symmem.liveness.LivenessAgent;
import io.symmem.liveness.WorldFailure;
import io.symmem.memory.SymmetricAllocator;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nccl.NcclGroups;
import io.symmem.store.EventBusStore;
import io.symmem.store.GroupNames;
import io.symmem.store.SideConnectionStore;
import io.symmem.store.SideConnections;
import io.symmem.store.Store;
import io.symmem.store.StoreEventBusService;
import io.symmem.store.StoreException;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.etcd.EtcdStore;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * This process as one rank of its world, in plain Java: hosts the store (rank 0 unless
 * SYMMEM_STORE_HOST says otherwise), connects to it, joins liveness, opens the backend and performs the
 * world rendezvous; at the end leaves in order and closes. The service's RankRuntime (a CDI
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
 *         new WorldEvents() { });
 * member.join();
 * try (SymmetricMemory m = member.allocator().allocate(member.world(), 1 << 20, Duration.ofSeconds(30))) { ... }
 * member.leave();
 * member.close();
 * }</pre>
 */
public final class WorldMember implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(WorldMember.class);

    /**
     * After a failed join the host keeps serving this long before it closes the store: the other ranks'
     * deadlines fall a moment later (they started later), and they need the store to find out which
     * ranks are missing rather than only that the store is gone.
     */
    private static final Duration FAILED_HOST_LINGER = Duration.ofSeconds(3);

    private final SymmemConfig config;
    private final Vertx vertx;
    private final ObjectMapper json;
    private final int httpPort;
    private final WorldEvents events;
    private final StoreConnector connector;
    private final RunKeys runKeys;

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
    /** Closed (the process stops): a join still running then fails for that reason alone. */
    private volatile boolean closed;
    /** The store server a member of an earlier generation hosted, to serve on (null: start one if hosting). */
    private final StoreServer keptServer;
    /** The lowest generation this member may join: the one after the generation this rank lost. */
    private final long firstGeneration;
    /** The generation of the world this member joined (see {@link WorldGeneration}); -1 before. */
    private volatile long generation = -1;
    /** The generation the counter moved to while this member was joining; null while it has not. */
    private volatile Long movedTo;
    private volatile Store unguardedStore;  // no liveness guard: the generation is given up after the world failed
    private volatile GenerationWatch generationWatch;
    private volatile boolean leaving;  // in order: the generation counter is no longer this member's business
    /** The hosted server went to the next generation's member: close() leaves it serving. */
    private volatile boolean serverReleased;

    /** @param httpPort the port this rank serves HTTP on, shown to its peers; 0 where it serves none */
    public WorldMember(SymmemConfig config, Vertx vertx, ObjectMapper json, int httpPort, WorldEvents events) {
        this(config, vertx, json, httpPort, events, null, 0);
    }

    /**
     * A member that joins the world's next generation and, where this rank hosts the store, serves it on
     * {@code keptServer}, the server a member of an earlier generation hosted and gave up with
     * {@link #releaseStoreServer()} (so the other ranks keep their store and its keys). It joins
     * generation {@code firstGeneration} or a later one.
     */
    public WorldMember(SymmemConfig config, Vertx vertx, ObjectMapper json, int httpPort, WorldEvents events,
            StoreServer keptServer, long firstGeneration) {
        this.keptServer = keptServer;
        this.firstGeneration = firstGeneration;
        this.config = config;
        this.vertx = vertx;
        this.json = json;
        this.httpPort = httpPort;
        this.events = events;
        this.connector = new StoreConnector(config, vertx);
        this.runKeys = new RunKeys(config);
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
            if (config.hostsStore() && keptServer != null) {
                server = keptServer;
            } else if (config.hostsStore()) {
                server = connector.host(storeTimeout);
                LOG.infof("rank 0 hosts the store at %s", storeAddress());
                events.storeHosted(server);
            }
            if (server == null && config.store().url().isEmpty()) {
                connector.awaitPublishedPort(storeTimeout);
            }
            liveness = new Liveness(config.rank());
            liveness.whenFailed(this::worldFailed);
            connectStore(storeTimeout);
            Store wholeRun = runKeys.scoped(store);
            generation = WorldGeneration.enter(wholeRun, config.worldSize(), firstGeneration, storeTimeout);
            runStore = WorldGeneration.scoped(wholeRun, generation);
            if (generation > 0) {
                LOG.infof("rank %d joins generation %d of its world", config.rank(), generation);
            }
            startLiveness(storeTimeout);
            long mine = generation;
            // For as long as this member is in its world: a rank that restarted (or survivors that lost one)
            // moved the counter, and this generation can no longer go on, even if no rank of it died here.
            generationWatch = new GenerationWatch(vertx, wholeRun, mine, () -> closed || leaving, now -> {
                if (!joined) {
                    movedTo = now;
                }
                liveness.fail(java.util.Set.of(), joined
                        ? "the world forms again as generation " + now + " (a rank restarted, or the others lost one): "
                                + "generation " + mine + " cannot go on"
                        : "generation " + mine + " of the world was given up while rank " + config.rank()
                                + " joined it (the world forms again as generation " + now + ")", false);
            });
            world = new StoreExchange(runStore, GroupNames.WORLD, config.rank(), config.worldSize());
            BackendJoin.Joined opened = new BackendJoin(config, world, runStore, json, httpPort)
                    .join(config.timeout().rendezvous());
            backend = opened.backend();
            peers = opened.peers();
            nvshmem = opened.nvshmem();
            ncclGroups = opened.ncclGroups();
            allocator = new SymmetricAllocator(backend, config.timeout().barrier(),
                    nvshmem == null ? null : nvshmem.world(), ncclGroups);
            livenessAgent.startMonitoring();
            joined = true;
            livenessAgent.publishReady();
            LOG.infof("rank %d of %d joined the world (backend %s, device %s)", config.rank(), config.worldSize(),
                    backend.name(), backend.deviceName());
        } catch (RuntimeException | IOException e) {
            failedBeforeJoined = true;
            stopWatchingGeneration();
            if (livenessAgent != null) {
                livenessAgent.close();
            }
            if (closed) {
                LOG.infof("rank %d stopped before it joined the world", config.rank());
            } else {
                // The caller says it on one line (every command does); here it is for whoever debugs.
                LOG.debugf("rank %d failed to join the world: %s", config.rank(), e.getMessage());
            }
            Long moved = movedTo;
            if (moved != null && !closed) {
                throw new WorldGenerationMovedException(config.rank(), generation, moved, e);
            }
            throw e;
        }
    }

    /** The generation of the world this member joined (or is joining); -1 before it reached the store. */
    public long generation() {
        return generation;
    }

    private void stopWatchingGeneration() {
        GenerationWatch watch = generationWatch;
        if (watch != null) {
            watch.close();
        }
    }

    /**
     * This member's generation can no longer go on (its world failed, or this rank's join of it did and
     * the rank joins again): the ranks that come next join the one after it. Best effort: a store that is gone has no
     * counter to move.
     */
    public void giveUpGeneration() {
        boolean storeLost = liveness != null && liveness.failure().map(WorldFailure::storeLost).orElse(false);
        if (unguardedStore != null && generation >= 0 && !storeLost) {
            WorldGeneration.giveUpQuietly(runKeys.scoped(unguardedStore), generation, config.timeout().store());
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
     * MASTER_ADDR:port, the port the store was bound to where this rank hosts it (MASTER_PORT may be 0),
     * or the one rank 0 published where this rank reads it; for a store on etcd, SYMMEM_STORE's address.
     */
    public String storeAddress() {
        if (config.store().url().isPresent()) {
            return config.etcdStore().orElseThrow().describe();
        }
        StoreServer hosted = server;
        return config.masterAddr() + ":" + (hosted != null && hosted.port() > 0 ? hosted.port() : connector.port());
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

    /**
     * Hands the store server this rank hosts to whoever forms the next generation (a new member, given it
     * at construction): {@link #close} then leaves it serving, with every key and connection. Null where
     * this rank hosts none.
     */
    public synchronized StoreServer releaseStoreServer() {
        StoreServer hosted = server;
        serverReleased = true;
        return hosted;
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

    /** Liveness on connections of its own (see {@link LivenessStart}), in this member's generation. */
    private void startLiveness(Duration storeTimeout) {
        String generationScope = generation == 0 ? "" : WorldGeneration.PREFIX + generation + "/";
        livenessAgent = new LivenessStart(config, connector, this::generationScoped, runKeys.scope() + generationScope,
                livenessConnections).start(server, etcdStore, liveness, storeAddress(), events, storeTimeout);
    }

    /** {@code base} as this member's generation of this run sees it. */
    private Store generationScoped(Store base) {
        return WorldGeneration.scoped(runKeys.scoped(base), generation);
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

    /** The store backend of this rank, served on the event bus, and the EventBusStore every component uses. */
    private void connectStore(Duration storeTimeout) {
        if (server != null) {
            storeBackend = server.localStore();
        } else if (config.store().url().isPresent()) {
            // The rank's lease (its member key's, see LeaseMembers) expires one liveness bound after the
            // rank stops renewing it; etcd rounds a TTL up to whole seconds.
            etcdStore = EtcdStore.connect(config.etcdStore().orElseThrow(), storeTimeout, StoreConnector.limits(config),
                    config.timeout().liveness());
            storeBackend = etcdStore;
        } else {
            // A wait holds its connection until answered, and an ADD on a non-integer value costs it: on
            // the shared one either would hold up or fail every other request of the rank (HTTP callers'
            // included), so they run on side connections.
            sharedStoreClient = connector.connect(storeTimeout);
            storeBackend = new SideConnectionStore(sharedStoreClient, new SideConnections(() -> connector.connectAsync(storeTimeout)));
        }
        storeService = new StoreEventBusService(vertx, storeBackend);
        storeService.register().await().atMost(storeTimeout);
        EventBusStore viaBus = new EventBusStore(vertx, storeAddress(), storeTimeout);
        viaBus.ping().await().atMost(storeTimeout.plusSeconds(5));
        unguardedStore = viaBus;
        store = new GuardedStore(viaBus, liveness);
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
        leaving = true;
        stopWatchingGeneration();
        Duration timeout = config.timeout().store();
        if (nvshmem != null) {
            nvshmem.finalizeWorld(config.timeout().rendezvous());
        }
        if (ncclGroups != null) {
            ncclGroups.close();  // collective: every rank leaves, and finalize waits for the peers
        }
        if (config.rank() != 0) {
            liveness.leaving(); // rank 0 may now close the store: a dropped connection is that, not a death
            livenessAgent.leave(timeout);
            if (sharedStoreClient != null) {
                // Rank 0 may close the store as soon as it reads the key below: no reconnecting then,
                // so that what is still pending fails at once instead of waiting for a store that is gone.
                sharedStoreClient.whenConnectionLost(sharedStoreClient::close);
            }
            LeaveReports.report(runStore, config.rank(), timeout);
            confirmLeft(timeout);
            disconnectFromStore();
            return;
        }
        LeaveReports.awaitOthers(runStore, config.worldSize(), waitForOthers);
        livenessAgent.leave(timeout);
        if (!config.hostsStore()) {
            // The store outlives this run: every rank is done with it, so take this run's keys away
            // (a long-lived store would otherwise grow by every run, and the run id can be used again).
            runKeys.removeAll(store, timeout, storeAddress());
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
        stopWatchingGeneration();
        if (server != null && failedBeforeJoined && !serverReleased) {
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
        if (server != null && !serverReleased) {
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
