package io.symmem.store.server;

import io.smallrye.mutiny.Uni;
import io.symmem.store.ContextTasks;
import io.symmem.store.PortInUse;
import io.symmem.store.Store;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreSpin;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.logging.Logger;

/**
 * The rendezvous store server (hosted by rank 0): an in-memory key/value map served over TCP with
 * PyTorch TCPStore's framing. All state lives on one event-loop context, so no locks are needed and
 * no handler ever blocks.
 *
 * <p><b>Order across connections.</b> TCPStore's SET has no answer, so a client that sets on one
 * connection and then (after its set returned) checks on another relies on the server applying what
 * it read earlier before what it read later. The event loop reads every ready socket of one select
 * round before it runs tasks, but the order of sockets within a round is not their arrival order
 * (level-triggered epoll reports a socket that was ready in the previous round ahead of sockets that
 * became ready since). So connections only decode while reading, and one {@link Scheduler} pass per
 * round applies what was read, in phases: first every connection's requests without an answer that
 * may run (SET, APPEND, MULTI_SET, QUEUE_PUSH up to its next answered request), then one answered
 * request per connection, and again until nothing is left. A request that expects an answer therefore
 * sees every set the server read before it or in the same turn (from a client that waits for each
 * answer before its next request, as PyTorch's does), whichever socket it came on. What the server
 * cannot order is what it has not read: the kernel does not promise to deliver two sockets' data in
 * the order it was sent, so a reader on another connection needs an answer on the setter's
 * connection first (SideConnectionStore sends a PING for that). Answers of one pass are written once
 * per connection.
 *
 * <pre>{@code
 * StoreServer server = new StoreServer(vertx, StoreLimits.defaults());
 * int port = server.listen("0.0.0.0", 29500).await().atMost(Duration.ofSeconds(5));
 * ...
 * server.close();
 * }</pre>
 */
public final class StoreServer implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(StoreServer.class);

    private final Vertx vertx;
    private final StoreLimits limits;
    private final StoreEventLoop loop;
    private final Context context;
    private final NextTurn nextTurn;
    private final StoreState state = new StoreState();
    private final StoreMembers members = new StoreMembers(state);
    private final StoreStatistics statistics = new StoreStatistics();
    private final StoreFigures figures = new StoreFigures(state, statistics);
    private final Set<StoreServerConnection> connections = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Scheduler scheduler = new Scheduler();
    /** Handed out by {@link #localStore()}: their waits fail when the server stops (its loop ends). */
    private final List<LocalStore> localStores = new CopyOnWriteArrayList<>();
    private final AtomicReference<Future<Void>> stopResult = new AtomicReference<>();
    /** Address given to the constructor for {@link #start()}; null when {@link #listen} is used directly. */
    private final String configuredHost;
    private final int configuredPort;
    private NetServer netServer;
    private volatile String boundHost;
    private volatile int boundPort = -1;

    /** A server with {@link StoreLimits#defaults()} that {@link #start()} binds to host:port (0 = ephemeral). */
    public StoreServer(Vertx vertx, String host, int port) {
        this(vertx, host, port, StoreLimits.defaults());
    }

    /** {@code host} may be null when the address is given later to {@link #listen(String, int)}. */
    public StoreServer(Vertx vertx, String host, int port, StoreLimits limits) {
        this(vertx, host, port, limits, StoreSpin.serverNanos());
    }

    /** As above, with the event loop's poll window given instead of read from the environment. */
    StoreServer(Vertx vertx, String host, int port, StoreLimits limits, long spinNanos) {
        this.vertx = Objects.requireNonNull(vertx, "vertx must not be null");
        this.limits = Objects.requireNonNull(limits, "limits must not be null");
        this.configuredHost = host;
        this.configuredPort = checkPort(port);
        // One event loop of its own serves every connection and the state (see StoreEventLoop).
        this.loop = StoreEventLoop.create(vertx, spinNanos);
        this.context = loop.context();
        this.nextTurn = new NextTurn(context);
    }

    /** A server whose address is given later, to {@link #listen(String, int)}. */
    public StoreServer(Vertx vertx, StoreLimits limits) {
        this(vertx, null, 0, limits);
    }

    /** Binds the address given to the constructor; yields the bound port. */
    public Uni<Integer> start() {
        if (configuredHost == null) {
            throw new IllegalStateException("no address was given to the constructor; use listen(host, port)");
        }
        return listen(configuredHost, configuredPort);
    }

    /**
     * Binds host:port and starts serving; the Uni yields the bound port (the ephemeral one when 0 was
     * asked). Starts at once, like every Uni of this package.
     */
    /** How long listen() keeps retrying a port that is still in use. */
    static final java.time.Duration BIND_RETRY = java.time.Duration.ofSeconds(3);

    public Uni<Integer> listen(String host, int port) {
        Objects.requireNonNull(host, "host must not be null");
        checkPort(port);
        Promise<Integer> bound = Promise.promise();
        long deadline = System.nanoTime() + BIND_RETRY.toNanos();
        onContext(bound, () -> {
            if (netServer != null) {
                bound.fail(new IllegalStateException("store server is already listening on " + address()));
                return;
            }
            bind(host, port, deadline, bound);
        });
        return fromFuture(bound.future());
    }

    /**
     * A store restarted on its port (rank 0 restarted, a test restarting its server) can find the
     * port still held for a moment by the previous server's closing connections: retry the bind for
     * up to {@link #BIND_RETRY} before failing with the address named.
     */
    private void bind(String host, int port, long deadline, Promise<Integer> bound) {
        netServer = vertx.createNetServer(new NetServerOptions().setHost(host).setPort(port).setTcpNoDelay(true)
                .setReuseAddress(true));
        netServer.connectHandler(this::accept);
        netServer.listen().onSuccess(server -> {
            boundHost = host;
            boundPort = server.actualPort();
            LOG.infof("store server listening on %s (%s)", address(), loop.description());
            bound.complete(boundPort);
        }).onFailure(e -> {
            // Closed now, not left to Vert.x's own close, which ran it after its event loop had stopped
            // and printed a stack trace after the rank's one-line error.
            NetServer failed = netServer;
            netServer = null;
            if (failed != null) {
                failed.close();
            }
            if (PortInUse.find(e) != null && port != 0 && System.nanoTime() < deadline) {
                LOG.debugf("store port %s:%d still in use (%s); retrying", host, port, e.getMessage());
                vertx.setTimer(50, t -> bind(host, port, deadline, bound));
                return;
            }
            bound.fail(new StoreException("store server could not bind " + host + ":" + port + ": " + e.getMessage(), e));
        });
    }

    /** A socket the NetServer accepted; tests hand in sockets of their own to deliver reads by hand. Confined to the server's context. */
    void accept(NetSocket socket) {
        StoreServerConnection connection = new StoreServerConnection(socket, state, members, statistics, limits, scheduler,
                context, nextTurn);
        connections.add(connection);
        statistics.accepted();
        socket.handler(connection::onData);
        socket.closeHandler(v -> {
            connection.onClosed();
            forget(connection);
        });
        socket.exceptionHandler(e -> LOG.debugf("store: connection from %s failed: %s", connection.remote(), e));
    }

    /** Once per connection, whether it closed by itself or was closed by {@link #stop()}. */
    private void forget(StoreServerConnection connection) {
        if (connections.remove(connection)) {
            statistics.closed();
        }
    }

    /**
     * Applies the requests the connections decoded, once per read batch: {@link #schedule} runs a pass
     * as a task on the server's context, and the event loop runs tasks only after it has read every
     * socket that was ready. Confined to the server's context.
     *
     * <p>A pass works in rounds (every connection's answerless requests that may run, then one answered
     * request per connection). After a round that ends past {@link #PASS_BUDGET_NANOS}, the pass stops
     * and the rest is applied by a pass queued behind the loop's next look at the sockets
     * ({@link NextTurn}), so a client that pipelines thousands of requests cannot keep the others
     * waiting for the whole of them. The order guarantee is kept: a round always applies its phase 1
     * in full before any request with an answer, and a cut pass resumes with phase 1. What a single
     * request costs is not cut (each request is atomic): a MULTI_SET of 65,536 keys is one step.
     */
    final class Scheduler {
        /** How long one pass may run before it lets the loop read the sockets again. */
        static final long PASS_BUDGET_NANOS = 1_000_000;

        private List<StoreServerConnection> withWork = new ArrayList<>();
        private boolean passQueued;
        private boolean inPass;

        void schedule(StoreServerConnection connection) {
            if (!connection.scheduled) {
                connection.scheduled = true;
                withWork.add(connection);
            }
            if (!passQueued && !inPass) {
                passQueued = true;
                context.runOnContext(ignored -> pass());
            }
        }

        private void pass() {
            passQueued = false;
            inPass = true;
            long deadline = System.nanoTime() + PASS_BUDGET_NANOS;
            List<StoreServerConnection> round = new ArrayList<>();
            List<StoreServerConnection> touched = new ArrayList<>();
            boolean cut = false;
            try {
                boolean progress = absorb(round, touched);
                while (progress) {
                    progress = false;
                    for (StoreServerConnection connection : round) {
                        progress |= connection.applyUnanswered();
                    }
                    for (StoreServerConnection connection : round) {
                        progress |= connection.applyOneAnswered();
                    }
                    // Connections released by a set in this round (or newly readable): serve them too,
                    // after the phase-1 writes of this round.
                    progress |= absorb(round, touched);
                    if (progress && System.nanoTime() - deadline > 0) {
                        cut = true;
                        break;
                    }
                }
            } finally {
                inPass = false;
                if (cut) {
                    for (StoreServerConnection connection : round) {
                        if (connection.hasWork() && !connection.scheduled) {
                            connection.scheduled = true;
                            withWork.add(connection);
                        }
                    }
                    passQueued = nextTurn.run(this::pass);
                }
                for (StoreServerConnection connection : touched) {
                    connection.flush();
                }
            }
        }

        /** Moves the connections scheduled since into {@code round}; true if there were any. */
        private boolean absorb(List<StoreServerConnection> round, List<StoreServerConnection> touched) {
            if (withWork.isEmpty()) {
                return false;
            }
            for (StoreServerConnection connection : withWork) {
                connection.scheduled = false;
                if (!round.contains(connection)) {
                    round.add(connection);
                    touched.add(connection);
                }
            }
            withWork = new ArrayList<>();
            return true;
        }
    }

    private static int checkPort(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return port;
    }

    /** The bound port; -1 before {@link #start()} completed. */
    public int port() {
        return boundPort;
    }

    /** host:port as bound, for logs and for telling clients where to connect. */
    public String address() {
        return boundHost + ":" + boundPort;
    }

    /** Number of WAITs the server holds unanswered; for tests and diagnostics. */
    public Uni<Integer> pendingWaitCount() {
        Promise<Integer> count = Promise.promise();
        onContext(count, () -> count.complete(state.pendingWaits()));
        return fromFuture(count.future());
    }

    /** Which loop serves the store and how it waits, as logged at start. */
    public String loopDescription() {
        return loop.description();
    }

    /** The thread that serves the store; for tests. */
    Uni<Thread> loopThread() {
        Promise<Thread> thread = Promise.promise();
        onContext(thread, () -> thread.complete(Thread.currentThread()));
        return fromFuture(thread.future());
    }

    /**
     * Runs {@code action} as one task of the server's loop, as a read batch runs; for tests. The pass
     * that applies what it decoded runs after it, as after the loop has read its sockets.
     */
    Uni<Void> onLoop(Runnable action) {
        Promise<Void> done = Promise.promise();
        onContext(done, () -> {
            try {
                action.run();
                done.complete();
            } catch (RuntimeException e) {
                done.fail(e);
            }
        });
        return fromFuture(done.future());
    }

    /** Key count, connections and operations served per type, read on the server's context. */
    public Uni<StoreStats> stats() {
        Promise<StoreStats> snapshot = Promise.promise();
        onContext(snapshot, () -> snapshot.complete(statistics.snapshot(state, connections)));
        return fromFuture(snapshot.future());
    }

    /** Every open TCP connection's queues (answers unsent, requests held) and whether it is paused; read on the server's context. */
    public Uni<List<StoreConnectionStats>> connectionStats() {
        Promise<List<StoreConnectionStats>> snapshot = Promise.promise();
        onContext(snapshot, () -> snapshot.complete(connections.stream().map(StoreServerConnection::stats).toList()));
        return fromFuture(snapshot.future());
    }

    /** The figures metrics publish, read live from any thread (no trip to the loop, no copy that lags). */
    public StoreFigures figures() {
        return figures;
    }

    /**
     * A {@link Store} on this server's data that skips TCP: its operations run on the server's
     * context directly. Meant for the rank that hosts the server. Closing it leaves the server running.
     */
    public LocalStore localStore() {
        LocalStore local = new LocalStore(context, state, statistics, limits, address());
        localStores.add(local);
        return local;
    }

    /** Closes every connection (their clients see "connection lost") and the listening socket. */
    public Uni<Void> stop() {
        Promise<Void> stopped = Promise.promise();
        if (!stopResult.compareAndSet(null, stopped.future())) {
            return fromFuture(stopResult.get()); // stopped already, or stopping: the same outcome
        }
        context.runOnContext(ignored -> {
            for (LocalStore local : localStores) {
                local.serverStopped();
            }
            for (StoreServerConnection connection : new ArrayList<>(connections)) {
                connection.close();
                forget(connection);
            }
            if (netServer == null) {
                stopped.complete();
                return;
            }
            netServer.close().onComplete(done -> {
                LOG.infof("store server on %s stopped", address());
                stopped.complete();
            });
        });
        // The loop's thread ends after it has run the closes queued above (a LocalStore of this
        // server fails from then on).
        return fromFuture(stopped.future().onComplete(done -> loop.close()));
    }

    /** Blocking {@link #stop()}; do not call it from an event-loop thread. */
    @Override
    public void close() {
        stop().await().atMost(Duration.ofSeconds(10));
    }

    /** Runs {@code action} on the server's loop; once the server has stopped, fails {@code result} instead. */
    private void onContext(Promise<?> result, Runnable action) {
        if (!ContextTasks.tryRun(context, action)) {
            result.fail(new StoreException("store server " + address() + " was stopped"));
        }
    }

    private static <T> Uni<T> fromFuture(Future<T> future) {
        return Uni.createFrom().completionStage(future.toCompletionStage());
    }
}
