package io.symmem.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.symmem.config.SymmemConfig;
import io.symmem.liveness.Liveness;
import io.symmem.liveness.WorldFailure;
import io.symmem.memory.PoolFigures;
import io.symmem.memory.SymmetricAllocator;
import io.symmem.memory.SymmetricMemPool;
import io.symmem.nativ.NativeBackend;
import io.symmem.nccl.NcclGroups;
import io.symmem.service.world.WorldEvent;
import io.symmem.service.world.WorldView;
import io.symmem.store.LiveKeys;
import io.symmem.store.Store;
import io.symmem.store.StoreExchange;
import io.symmem.store.server.StoreServer;
import io.symmem.world.NvshmemStartup;
import io.symmem.world.PeerInfo;
import io.symmem.nativ.NativeCore;
import io.symmem.world.WorldEvents;
import io.symmem.world.WorldGenerationMovedException;
import io.symmem.world.WorldMember;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * One rank of the world as the service runs it: joins through a {@link WorldMember} (store hosting,
 * liveness, backend, world rendezvous) on a thread of its own, and adds what the service shows of it:
 * the rank's state for readiness, store and pool metrics, and world events on the event bus.
 * Started by the rank commands (serve, demo), not by every process,
 * so that the launcher and the config command never touch the store or the device.
 */
@ApplicationScoped
public class RankRuntime {
    private static final Logger LOG = Logger.getLogger(RankRuntime.class);
    public static final String WORLD = io.symmem.store.GroupNames.WORLD;
    /**
     * System property (outside the symmem.* configuration): join as soon as the application has started.
     * Set for `serve`, which would otherwise start the join only once its command line is set up.
     */
    public static final String JOIN_AT_START = "io.symmem.join-at-start";

    /** FAILED: the world rendezvous failed. LOST: joined, then a peer (or the store) was found gone. */
    public enum State { NOT_STARTED, JOINING, READY, FAILED, LOST }

    @Inject
    SymmemConfig config;
    @Inject
    Vertx vertx;
    @Inject
    ObjectMapper json;
    @Inject
    StoreMetrics storeMetrics;
    @Inject
    PoolMetrics poolMetrics;
    @Inject
    io.micrometer.core.instrument.MeterRegistry registry;
    @ConfigProperty(name = "quarkus.http.port")
    int httpPort;

    /** How long rank 0, stopped from outside, waits for the other ranks to report that they left. */
    static final Duration LEAVE_ON_STOP = Duration.ofSeconds(5);

    private volatile State state = State.NOT_STARTED;
    /** This rank has left its world in order (leave runs once). */
    private boolean left;
    /** What this rank knows of every rank of its world; made at start. */
    private volatile WorldView view;
    private volatile String error;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    /** Times this rank formed its world again (a metric). */
    private final java.util.concurrent.atomic.AtomicLong reforms = new java.util.concurrent.atomic.AtomicLong();
    /** Forms the world again after it was lost; one at a time. */
    private final WorldReform reform = new WorldReform(this);
    /** The process stops: no new generation is formed. */
    private volatile boolean stopping;
    /** The ranks found gone since this rank was last ready (a world forming again may lose more). */
    private final java.util.SortedSet<Integer> ranksGone = new java.util.TreeSet<>();
    /** How this rank joins, holds and leaves its world; null until started. */
    private volatile WorldMember member;
    /** Pools made by {@link #createPool}: shown in /v1/info and the metrics until closed. */
    private final List<SymmetricMemPool> pools = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Numbers the pools' meters: never reused, so a new pool's meters are never an old pool's. */
    private final java.util.concurrent.atomic.AtomicInteger poolNumbers = new java.util.concurrent.atomic.AtomicInteger();

    void onStart(@Observes StartupEvent event) {
        if (Boolean.getBoolean(JOIN_AT_START)) {
            start();
        }
    }

    /** Joins the world; returns at once, {@link #awaitReady} waits for the outcome. Idempotent. */
    public synchronized void start() {
        if (state != State.NOT_STARTED) {
            return;
        }
        state = State.JOINING;
        view = new WorldView(config.rank(), config.worldSize(), this::publish);
        member = newMember(null, 0);
        io.micrometer.core.instrument.FunctionCounter.builder("symmem.world.reforms", reforms, java.util.concurrent.atomic.AtomicLong::get)
                .description("Times this rank formed its world again after losing it").register(registry);
        io.micrometer.core.instrument.Gauge.builder("symmem.world.generation", this, RankRuntime::generation)
                .description("The generation of the world this rank is in (0 until the world first forms again)")
                .register(registry);
        Thread joiner = new Thread(this::join, "symmem-world-rendezvous");
        joiner.setDaemon(true);
        joiner.start();
    }

    public SymmemConfig config() {
        return config;
    }

    public State state() {
        return state;
    }

    public String error() {
        return error;
    }

    public List<PeerInfo> peers() {
        WorldMember m = member;
        return m == null ? List.of() : m.peers();
    }

    /** The generation of the world this rank is in (or joining): 0 until the world first re-forms. */
    public long generation() {
        WorldMember m = member;
        return m == null ? 0 : Math.max(0, m.generation());
    }

    /** The ranks found gone since this rank was last ready, as "[0, 2]"; empty while none is. */
    public synchronized String ranksGone() {
        return ranksGone.isEmpty() ? "" : ranksGone.toString();
    }

    /** How many times this rank formed its world again after losing it. */
    public long reforms() {
        return reforms.get();
    }

    /** Blocks until the world rendezvous has succeeded, or throws its failure. */
    public void awaitReady(Duration timeout) {
        try {
            ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("rank " + config.rank() + " did not finish the world rendezvous within " + timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the world rendezvous");
        }
    }

    /** This rank's view of its world's health; null before the rank reached the store. */
    public Liveness liveness() {
        WorldMember m = member;
        return m == null ? null : m.liveness();
    }

    public NativeBackend backend() {
        WorldMember m = member;
        return m == null ? null : m.backend();
    }

    public StoreExchange world() {
        WorldMember m = member;
        return m == null ? null : m.world();
    }

    public SymmetricAllocator allocator() {
        WorldMember m = member;
        return m == null ? null : m.allocator();
    }

    public String storeAddress() {
        WorldMember m = member;
        if (m != null) {
            return m.storeAddress();
        }
        return config.etcdStore().map(t -> t.describe()).orElse(config.masterAddr() + ":" + config.masterPort());
    }

    /** The store as components use it (through the event bus); null until this rank has reached it. */
    public Store store() {
        WorldMember m = member;
        return m == null ? null : m.store();
    }

    /** The store under this run's prefix (SYMMEM_RUN_ID), where the world's groups keep their keys; null until reached. */
    public Store runStore() {
        WorldMember m = member;
        return m == null ? null : m.runStore();
    }

    /** The store server when this rank hosts it (rank 0, once started); null otherwise. */
    public StoreServer storeServer() {
        WorldMember m = member;
        return m == null ? null : m.storeServer();
    }

    /**
     * A memory pool of {@code group} (collective: every rank of the group creates it and allocates the
     * same sequence) with SYMMEM_POOL_SEGMENT / _LIMIT / _STRICT; its figures appear in /v1/info and
     * as symmem_pool_* metrics. {@code noSplit}: PyTorch's no_split.
     */
    public SymmetricMemPool createPool(StoreExchange group, boolean noSplit) {
        SymmetricAllocator a = allocator();
        if (a == null) {
            throw new IllegalStateException("the rank has not joined its world yet (state " + state + ")");
        }
        SymmemConfig.Pool p = config.pool();
        SymmetricMemPool pool = new SymmetricMemPool(a, group, SymmetricMemPool.fromSettings(p.segment(),
                p.limit().orElse(0L), p.strict(), noSplit, config.timeout().rendezvous()));
        pools.add(pool);
        poolMetrics.watch(pool, poolNumbers.getAndIncrement());
        return pool;
    }

    /** The figures of every pool made here and not closed. */
    public List<PoolFigures> poolFigures() {
        pools.removeIf(SymmetricMemPool::isClosed);
        return pools.stream().map(SymmetricMemPool::figures).toList();
    }

    /** A new exchange for a group of this world (its own key scope and rounds). */
    public StoreExchange exchange(String group, int rank, int worldSize) {
        WorldMember m = member;
        if (m == null || m.runStore() == null) {
            throw new IllegalStateException("rank " + config.rank() + " has not reached the store yet (state " + state + ")");
        }
        return m.exchange(group, rank, worldSize);
    }

    /**
     * A member of this rank's world; it reports to this runtime only while it is the current one (a member
     * of a generation given up says nothing more).
     */
    private WorldMember newMember(StoreServer keptServer, long firstGeneration) {
        WorldMember[] self = new WorldMember[1];
        self[0] = new WorldMember(config, vertx, json, httpPort, new WorldEvents() {
            @Override
            public void storeHosted(StoreServer server) {
                storeMetrics.watch(server);
            }

            @Override
            public void worldFailed(WorldFailure failure) {
                if (member == self[0]) {
                    RankRuntime.this.worldFailed(failure);
                }
            }

            @Override
            public void worldRecord(LiveKeys.WorldRecord record) {
                if (member == self[0]) {
                    view.record(record);
                }
            }
        }, keptServer, firstGeneration);
        return self[0];
    }

    /**
     * The first join. A join whose generation another rank gave up meanwhile (this rank restarted while
     * the world was forming again) goes on in the next generation at once.
     */
    private void join() {
        while (true) {
            try {
                member.join();
                view.joinedGeneration(member.generation());
                state = State.READY;
                ready.complete(null);
                return;
            } catch (WorldGenerationMovedException moved) {
                LOG.infof("%s", moved.getMessage());
                if (!replaceMember()) {
                    fail(moved);
                    return;
                }
            } catch (RuntimeException | IOException e) {
                fail(e);
                return;
            }
        }
    }

    private void fail(Exception e) {
        error = e.getMessage();
        state = State.FAILED;
        ready.completeExceptionally(e instanceof RuntimeException re ? re : new IllegalStateException(e));
    }

    /**
     * The world can no longer work (the member has aborted the native waits already): readiness goes
     * down, and the world view tells its subscribers. A rank that was ready then forms the world again
     * ({@link WorldReform}), without anyone restarting it.
     */
    private void worldFailed(WorldFailure failure) {
        boolean wasReady;
        synchronized (this) {
            wasReady = state == State.READY;
            if (state == State.READY || state == State.JOINING || state == State.LOST) {
                error = failure.reason();
                state = wasReady || state == State.LOST ? State.LOST : State.FAILED;
            }
            ranksGone.addAll(failure.ranks());
        }
        view.aborted(failure);
        if (wasReady && !stopping) {
            reform.start(failure.reason());
        }
    }

    /**
     * Gives up the current member's generation and puts a new member in its place, which joins the next
     * generation (the store server this rank hosts passes to it, with every key and connection). False
     * when the rank is stopping. The store call and the close run outside this runtime's lock, so that
     * readiness and the HTTP API never wait for them.
     */
    boolean replaceMember() {
        WorldMember old;
        synchronized (this) {
            if (stopping) {
                return false;
            }
            old = member;
        }
        old.giveUpGeneration();
        StoreServer kept = old.releaseStoreServer();
        pools.forEach(RankRuntime::closeQuietly);
        pools.clear();
        old.close();
        // The old generation's waits were aborted process-wide; the next generation's must run.
        NativeCore.resetAbort();
        WorldMember next = newMember(kept, old.generation() + 1);
        boolean stopped;
        synchronized (this) {
            stopped = stopping;
            if (!stopped) {
                member = next;
                if (state != State.LOST) {
                    state = State.JOINING;  // a first join that goes on in the next generation
                }
            }
        }
        if (stopped) {
            next.close();  // and the store it was handed: the process stops
            return false;
        }
        return true;
    }

    /** Joins the current member (made by {@link #replaceMember}); READY and a {@code reformed} event on success. */
    void joinReformed(String why) throws IOException {
        WorldMember m = member;
        m.join();
        synchronized (this) {
            if (member != m || stopping) {
                return;
            }
            error = null;
            state = State.READY;
            left = false;
            ranksGone.clear();
        }
        reforms.incrementAndGet();
        view.reformed(m.generation(), why);
        LOG.infof("rank %d is ready again: its world formed again as generation %d (%s)", config.rank(), m.generation(), why);
    }

    private static void closeQuietly(SymmetricMemPool pool) {
        try {
            pool.close();
        } catch (RuntimeException e) {
            LOG.debugf("a pool of the lost generation did not close cleanly: %s", e.getMessage());
        }
    }

    /** This rank's view of its world; null before {@link #start}. */
    public WorldView view() {
        return view;
    }

    /** Every world event also goes on the event bus, for components of this process. */
    private void publish(WorldEvent event) {
        try {
            vertx.eventBus().publish(WorldView.EVENT_BUS_ADDRESS, new io.vertx.core.json.JsonObject(json.writeValueAsString(event)));
        } catch (RuntimeException | com.fasterxml.jackson.core.JsonProcessingException e) {
            LOG.debugf("world event not published on the event bus: %s", e.getMessage());
        }
    }

    /** The NCCL communicators of this rank's groups; null unless SYMMEM_BACKEND=nccl. */
    public NcclGroups ncclGroups() {
        WorldMember m = member;
        return m == null ? null : m.ncclGroups();
    }

    /** NVSHMEM as this rank loaded and joined it; null unless SYMMEM_BACKEND=nvshmem. */
    public NvshmemStartup nvshmem() {
        WorldMember m = member;
        return m == null ? null : m.nvshmem();
    }

    /**
     * Leaves the world in order: every rank reports that it no longer needs the store, and rank 0,
     * which hosts it, waits for those reports (up to the store deadline) before it may shut down.
     */
    public void leave() {
        leave(config.timeout().store());
    }

    private void leave(Duration waitForOthers) {
        WorldMember leaving;
        synchronized (this) {
            if (state != State.READY || left) {
                return;
            }
            left = true;
            leaving = member;
        }
        // Outside the lock: leaving waits for store replies on the event loop, and a peer's death reported
        // on that loop meanwhile takes the lock (worldFailed); holding it here stopped both until the deadline.
        leaving.leave(waitForOthers);
    }

    /**
     * Stopped from outside (SIGTERM, as Kubernetes stops a pod; or the end of a command that did not
     * leave): leave in order, so that the other ranks see this rank left rather than vanished. Rank 0
     * waits for the others' reports only for {@link #LEAVE_ON_STOP}, well inside a pod's grace period.
     */
    void onStop(@Observes ShutdownEvent event) {
        stopping = true;
        try {
            leave(LEAVE_ON_STOP);
        } catch (RuntimeException e) {
            LOG.warnf("rank %d could not leave its world in order while stopping: %s", config.rank(), e.getMessage());
        }
    }

    @PreDestroy
    void stop() {
        stopping = true;
        reform.stop();
        WorldMember closing;
        synchronized (this) {
            closing = member;
        }
        if (closing != null) {
            closing.close();  // outside the lock, as leave
        }
    }
}
