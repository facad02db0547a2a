package io.symmem.store.client;

import io.smallrye.mutiny.Uni;
import io.symmem.store.ContextTasks;
import io.symmem.store.DurationText;
import io.symmem.store.Store;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.server.StoreServer;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.Popped;
import io.symmem.store.wire.RequestEncoder;
import io.symmem.store.wire.ResponseDecoder;
import io.symmem.store.wire.StoreArguments;
import io.symmem.store.wire.TcpStoreWire;
import io.symmem.store.wire.WireKeys;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/**
 * A {@link Store} reached over one TCP connection speaking PyTorch TCPStore's protocol.
 *
 * <h2>Usage</h2>
 * <pre>{@code
 * TcpStoreClient store = TcpStoreClient.connect(vertx, "10.0.0.1", 29500, Duration.ofSeconds(60))
 *         .await().atMost(Duration.ofSeconds(61));
 * store.set("k", bytes).await().indefinitely();
 * }</pre>
 *
 * <h2>Semantics worth knowing</h2>
 * <ul>
 *   <li>Every method starts its operation when called (not when the Uni is subscribed); the Uni only
 *       reports the outcome, and subscribing twice does not repeat the operation.</li>
 *   <li>Requests are pipelined; the server answers them in order, so answers are matched to a FIFO of
 *       pending requests. The one exception is WAIT, whose answer may come late: while a WAIT is
 *       unanswered, further requests that expect an answer are held back (exactly one WAIT is ever
 *       outstanding, as with TCPStore's synchronous client). SET expects no answer and is written at
 *       once, even past held-back requests, so a set on this client can always release a wait on it.</li>
 *   <li>With {@link Options#pipelineWaits()} (our {@link StoreServer} only), the server holds answered
 *       requests behind a pending WAIT instead, so a get writes WAIT and GET together (one round trip)
 *       and other answered requests go out at once; see {@link Options}.</li>
 *   <li>{@code set} completes when its frame has been written to the socket (TCPStore's set returns at
 *       the same point). The server applies one connection's frames in order, so any later request of
 *       this client observes it.</li>
 *   <li>Wait deadlines: at the deadline the client sends CANCEL_WAIT (as TCPStore does) and then one
 *       CHECK per awaited key, so the {@link StoreTimeoutException} names the keys still missing. If the
 *       server had already answered STOP_WAITING before it saw the cancel, the wait succeeds (TCPStore
 *       would throw here; succeeding is the more useful answer). A wait still held back behind another
 *       wait at its deadline fails at once and names all its keys.</li>
 *   <li>Reconnecting: when the connection drops (server restart, network), every request already
 *       written fails with a {@link StoreException} naming the store ("connection to store h:p lost"),
 *       because the client cannot know whether the server applied it. The client then reconnects with
 *       backoff (50 ms doubling to 1 s) for up to the connect timeout; requests made meanwhile are held
 *       and go out on the new connection (waits still fail at their own deadline). If no connection is
 *       made within the connect timeout, the client fails for good, and so does every later request.</li>
 *   <li>A wait whose deadline passed while the server stays silent (host gone, no FIN) fails at most
 *       {@link #CANCEL_GRACE} after its deadline, and the connection is dropped and re-made.</li>
 *   <li>Cancelling (the subscription to the Uni, e.g. a caller that gave up or timed out): a request not
 *       written yet is never written, so a caller told that it failed does not find it applied later;
 *       a WAIT already written is withdrawn with CANCEL_WAIT, so the server holds nothing for nobody.
 *       A request already written cannot be called back.</li>
 * </ul>
 *
 * <p>All mutable state is confined to one Vert.x context; public methods hop onto it.
 */
public final class TcpStoreClient implements Store {

    private static final Logger LOG = Logger.getLogger(TcpStoreClient.class);
    private static final long FIRST_RETRY_DELAY_MS = 50;
    private static final long MAX_RETRY_DELAY_MS = 1000;
    /** How long after a wait's deadline the server may take to answer CANCEL_WAIT before we drop the connection. */
    public static final Duration CANCEL_GRACE = Duration.ofSeconds(2);

    private final Vertx vertx;
    private final Context context;
    private final String host;
    private final int port;
    private final StoreLimits limits;
    private final Duration connectTimeout;
    /** Write a wait's follow-up (GET, MULTI_GET, QUEUE_POP) right behind its WAIT; see {@link Options}. */
    private final boolean pipelineWaits;
    private FrameInput input = new FrameInput();
    /** Requests not written yet: no connection, or held back behind an unanswered WAIT. */
    private final ArrayDeque<Outbound> toSend = new ArrayDeque<>();
    /** Requests written and awaiting their answer, in wire order. */
    private final ArrayDeque<Answer> inFlight = new ArrayDeque<>();
    private boolean waitOutstanding;
    private NetClient netClient;
    /** The current connection; null while (re)connecting. */
    private NetSocket socket;
    /** True once the current connection's handshake PING came back: only then do requests go out. */
    private boolean ready;
    /** Set for good: closed by the user, or could not (re)connect in time. */
    private StoreException failure;
    private long reconnects;
    /** Told each time an established connection drops (before any reconnect); see {@link #whenConnectionLost}. */
    private final List<Runnable> lostListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    private TcpStoreClient(Vertx vertx, String host, int port, Duration connectTimeout, Options options) {
        this.vertx = vertx;
        this.host = host;
        this.port = port;
        this.connectTimeout = connectTimeout;
        this.limits = options.limits();
        this.pipelineWaits = options.pipelineWaits();
        this.context = vertx.getOrCreateContext();
    }

    /**
     * How a client talks to its server.
     *
     * @param limits key/value limits checked before sending (they must not exceed the server's)
     * @param pipelineWaits {@code false} (default, for any TCPStore server, PyTorch's included): while a
     *     WAIT is unanswered, requests that expect an answer are held back in the client, and a get's
     *     GET is written only after its WAIT was answered (two round trips). {@code true}: ONLY for a
     *     symmem {@link StoreServer}, which applies each connection's requests in order and holds
     *     answered requests behind a pending WAIT: the GET (MULTI_GET, QUEUE_POP) goes out in the same
     *     write as its WAIT, so a get is one round trip, and other answered requests are written at
     *     once. A PyTorch server answers requests past a pending WAIT, so against it this mode would
     *     mix up answers: never turn it on for a server that is not ours.
     */
    public record Options(StoreLimits limits, boolean pipelineWaits) {
        public Options {
            java.util.Objects.requireNonNull(limits, "limits must not be null");
        }

        /** Default limits, no pipelining: safe against any TCPStore-protocol server. */
        public static Options defaults() {
            return new Options(StoreLimits.defaults(), false);
        }

        /** Default limits with WAIT+GET pipelining: for a symmem {@link StoreServer} only. */
        public static Options forSymmemServer() {
            return new Options(StoreLimits.defaults(), true);
        }

        public Options withLimits(StoreLimits newLimits) {
            return new Options(newLimits, pipelineWaits);
        }

        public Options withPipelineWaits(boolean on) {
            return new Options(limits, on);
        }
    }

    /** {@link #connect(Vertx, String, int, Duration, StoreLimits)} with default limits. */
    public static Uni<TcpStoreClient> connect(Vertx vertx, String host, int port, Duration connectTimeout) {
        return connect(vertx, host, port, connectTimeout, StoreLimits.defaults());
    }

    /**
     * Connects to the store at host:port, retrying with exponential backoff (50 ms doubling to 1 s)
     * until {@code connectTimeout} has passed, because rank 0's server may come up after the other
     * ranks start. Then sends VALIDATE and a PING and completes once the PING is echoed.
     * Fails with a {@link StoreException} naming the address when the deadline passes. The same
     * timeout bounds every later reconnection.
     */
    public static Uni<TcpStoreClient> connect(
            Vertx vertx, String host, int port, Duration connectTimeout, StoreLimits limits) {
        return connect(vertx, host, port, connectTimeout, Options.defaults().withLimits(limits));
    }

    /** As above, with {@link Options} (e.g. {@link Options#forSymmemServer()} to pipeline WAIT+GET). */
    public static Uni<TcpStoreClient> connect(
            Vertx vertx, String host, int port, Duration connectTimeout, Options options) {
        TcpStoreClient client = new TcpStoreClient(vertx, host, port, connectTimeout, options);
        CompletableFuture<TcpStoreClient> connected = new CompletableFuture<>();
        client.context.runOnContext(v -> {
            client.netClient = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true)
                    .setConnectTimeout((int) Math.max(1, Math.min(connectTimeout.toMillis(), 10_000))));
            client.establish(System.nanoTime() + connectTimeout.toNanos(), FIRST_RETRY_DELAY_MS, null, error -> {
                if (error == null) {
                    connected.complete(client);
                } else {
                    client.failAll(error);
                    client.netClient.close();
                    connected.completeExceptionally(error);
                }
            });
        });
        return Uni.createFrom().completionStage(connected);
    }

    @Override
    public String describe() {
        return host + ":" + port;
    }

    /** True if this client pipelines WAIT and its follow-up ({@link Options#pipelineWaits()}). */
    public boolean pipelinesWaits() {
        return pipelineWaits;
    }

    /**
     * Runs {@code listener} (on this client's context) each time an established connection drops,
     * before the client tries to reconnect: for a caller to whom a lost connection means the store (or
     * its host) is gone, such as liveness. Not run for {@link #close()}.
     */
    public void whenConnectionLost(Runnable listener) {
        lostListeners.add(java.util.Objects.requireNonNull(listener, "listener must not be null"));
    }

    /** Connections made after the first one; for tests and diagnostics. */
    public long reconnectCount() {
        return reconnects;
    }

    // ---- operations -------------------------------------------------------------------------

    @Override
    public Uni<Void> set(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        onContext(done, () -> fireAndForget(RequestEncoder.set(WireKeys.onWire(key), value), done));
        return toUni(done);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        onContext(done, () -> fireAndForget(RequestEncoder.append(WireKeys.onWire(key), value), done));
        return toUni(done);
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejected(StoreArguments.checkMultiSet(keys, values, limits), done)) {
            return toUni(done);
        }
        if (keys.isEmpty()) {
            done.complete(null);
            return toUni(done);
        }
        onContext(done, () -> fireAndForget(RequestEncoder.multiSet(WireKeys.onWire(keys), values), done));
        return toUni(done);
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        onContext(done, () -> fireAndForget(RequestEncoder.queuePush(WireKeys.onWire(key), value), done));
        return toUni(done);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        CompletableFuture<byte[]> value = new CompletableFuture<>();
        if (rejectInvalidKey(key, value)) {
            return toUni(value);
        }
        onContext(value, () -> waitThen(List.of(key), timeout, value,
                new Outbound(RequestEncoder.get(WireKeys.onWire(key)), new Reply<>(ResponseDecoder.value(limits.maxValueBytes()), value))));
        return toUni(value);
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        CompletableFuture<List<byte[]>> values = new CompletableFuture<>();
        if (rejectInvalidKeys(keys, values)) {
            return toUni(values);
        }
        if (keys.isEmpty()) {
            values.complete(List.of());
            return toUni(values);
        }
        List<String> copy = List.copyOf(keys);
        onContext(values, () -> waitThen(copy, timeout, values, new Outbound(RequestEncoder.multiGet(WireKeys.onWire(copy)),
                new Reply<>(ResponseDecoder.values(copy.size(), limits.maxValueBytes()), values))));
        return toUni(values);
    }

    /**
     * TCPStore's blocking pop: WAIT until the queue is non-empty (the server counts a non-empty queue
     * as a present key and wakes one waiter per push), then QUEUE_POP. Another client may pop the value
     * first; then this client waits again, until the deadline.
     */
    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        CompletableFuture<byte[]> value = new CompletableFuture<>();
        if (rejectInvalidKey(key, value)) {
            return toUni(value);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        onContext(value, () -> popUntil(key, timeout, deadline, value));
        return toUni(value);
    }

    private void popUntil(String key, Duration timeout, long deadline, CompletableFuture<byte[]> value) {
        if (value.isDone()) {
            return; // the caller gave up between two rounds
        }
        long remainingNanos = deadline - System.nanoTime();
        if (remainingNanos <= 0) {
            value.completeExceptionally(timeoutError(timeout, List.of(key)));
            return;
        }
        CompletableFuture<Popped> popped = new CompletableFuture<>();
        value.whenComplete((ignored, error) -> {
            if (value.isCancelled()) {
                popped.cancel(false); // withdraws this round's wait
            }
        });
        popped.whenComplete((result, error) -> {
            if (error != null) {
                value.completeExceptionally(error);
            } else if (result.value() != null) {
                value.complete(result.value());
            } else {
                context.runOnContext(v -> popUntil(key, timeout, deadline, value));
            }
        });
        waitThen(List.of(key), Duration.ofNanos(remainingNanos), popped, new Outbound(RequestEncoder.queuePop(WireKeys.onWire(key)),
                new Reply<>(ResponseDecoder.popped(limits.maxValueBytes()), popped)), timeout);
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKeys(keys, done)) {
            return toUni(done);
        }
        if (keys.isEmpty()) {
            done.complete(null);
            return toUni(done);
        }
        List<String> copy = List.copyOf(keys);
        onContext(done, () -> waitThen(copy, timeout, done, null));
        return toUni(done);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result)) {
            return toUni(result);
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.add(WireKeys.onWire(key), delta),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result) || rejectInvalidValue(expected, result) || rejectInvalidValue(desired, result)) {
            return toUni(result);
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.compareSet(WireKeys.onWire(key), expected, desired),
                new Reply<>(ResponseDecoder.value(limits.maxValueBytes()), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        if (rejectInvalidKeys(keys, result)) {
            return toUni(result);
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.check(WireKeys.onWire(keys)),
                new Reply<>(ResponseDecoder.checkResult(), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        CompletableFuture<Long> deleted = new CompletableFuture<>();
        if (rejectInvalidKey(key, deleted)) {
            return toUni(deleted).map(n -> n == 1);
        }
        onContext(deleted, () -> enqueue(new Outbound(RequestEncoder.deleteKey(WireKeys.onWire(key)),
                new Reply<>(ResponseDecoder.int64(), deleted))));
        return toUni(deleted).map(n -> n == 1);
    }

    /** Number of keys in the whole store (GETNUMKEYS), including keys of other clients; queues are not counted. */
    @Override
    public Uni<Long> numKeys() {
        CompletableFuture<Long> result = new CompletableFuture<>();
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.getNumKeys(),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    /** LIST_KEYS, with the "/" prefix removed; keys without it (not set through a TCPStore-style client) are left out. */
    @Override
    public Uni<List<String>> listKeys() {
        CompletableFuture<List<String>> result = new CompletableFuture<>();
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.listKeys(),
                new Reply<>(ResponseDecoder.keys(limits.maxKeyBytes(), Integer.MAX_VALUE - 8), result))));
        return toUni(result).map(WireKeys::fromWire);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result)) {
            return toUni(result);
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.queueLength(WireKeys.onWire(key)),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    /** Round trip to the server (PING); fails if the echoed nonce differs. */
    @Override
    public Uni<Void> ping() {
        CompletableFuture<Integer> echoed = new CompletableFuture<>();
        int nonce = (int) System.nanoTime();
        onContext(echoed, () -> enqueue(new Outbound(RequestEncoder.ping(nonce),
                new Reply<>(ResponseDecoder.uint32(), echoed))));
        return toUni(echoed).map(n -> {
            if (n != nonce) {
                throw new StoreProtocolException("store " + describe() + " echoed PING nonce " + n + " instead of " + nonce);
            }
            return null;
        });
    }

    /** Closes the connection; pending and later requests fail with a {@link StoreException}. Does not block. */
    @Override
    public void close() {
        // Not run when its Vert.x has shut down already, which closed the socket and failed what was pending.
        ContextTasks.tryRun(context, () -> {
            failAll(new StoreException("store client for " + describe() + " was closed"));
            if (socket != null) {
                socket.close();
            }
            if (netClient != null) {
                netClient.close();
            }
        });
    }

    // ---- connecting -------------------------------------------------------------------------

    /** Callback of {@link #establish}: null on success, the reason otherwise. */
    private interface Established {
        void done(StoreException error);
    }

    /** Connects and handshakes, retrying with backoff until {@code deadline}. */
    private void establish(long deadline, long delayMs, Throwable lastCause, Established established) {
        if (failure != null) {
            established.done(failure);
            return;
        }
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
        if (remainingMs <= 0) {
            String cause = lastCause == null ? "no answer" : lastCause.getMessage();
            established.done(new StoreException("could not connect to store " + describe() + " within "
                    + DurationText.of(connectTimeout) + ": " + cause, lastCause));
            return;
        }
        Future<NetSocket> connecting;
        try {
            connecting = netClient.connect(port, host);
        } catch (IllegalStateException clientClosed) {
            // Vert.x closes its clients when it shuts down (the process is ending, typically right after
            // the store host left): no reconnect, and nothing to shout about.
            LOG.debugf("store %s: not reconnecting, Vert.x is closing (%s)", describe(), clientClosed.getMessage());
            failAll(new StoreException("store client for " + describe() + " was closed: Vert.x is shutting down"));
            established.done(failure);
            return;
        }
        connecting.onComplete(attempt -> {
            if (attempt.succeeded() && SelfConnection.is(attempt.result().localAddress().port(),
                    attempt.result().remoteAddress().port(), attempt.result().localAddress().host(),
                    attempt.result().remoteAddress().host())) {
                attempt.result().close();
                retry(deadline, delayMs, SelfConnection.error(describe()), established);
            } else if (attempt.succeeded()) {
                handshake(attempt.result(), deadline, error -> {
                    if (error == null) {
                        established.done(null);
                    } else {
                        retry(deadline, delayMs, error, established);
                    }
                });
            } else {
                retry(deadline, delayMs, attempt.cause(), established);
            }
        });
    }

    private void retry(long deadline, long delayMs, Throwable cause, Established established) {
        long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
        LOG.debugf("store %s not reachable yet (%s); retrying in %d ms", describe(), cause.getMessage(), delayMs);
        vertx.setTimer(Math.max(1, Math.min(delayMs, remainingMs)), t ->
                establish(deadline, Math.min(delayMs * 2, MAX_RETRY_DELAY_MS), cause, established));
    }

    /**
     * TCPStore's opening: VALIDATE (no answer), then PING whose echo proves the server accepted us.
     * Held-back requests go out only after the echo, so they never precede VALIDATE.
     */
    private void handshake(NetSocket candidate, long deadline, Established established) {
        socket = candidate;
        ready = false;
        input = new FrameInput();
        candidate.handler(chunk -> {
            if (candidate == socket) {
                onData(chunk);
            }
        });
        candidate.closeHandler(v -> {
            if (candidate == socket) {
                onConnectionLost();
            }
        });
        candidate.exceptionHandler(e -> LOG.debugf("store %s connection error: %s", describe(), e));
        int nonce = (int) ProcessHandle.current().pid();
        CompletableFuture<Integer> echoed = new CompletableFuture<>();
        candidate.write(RequestEncoder.validate());
        write(new Outbound(RequestEncoder.ping(nonce), new Reply<>(ResponseDecoder.uint32(), echoed)));
        long remainingMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        long timer = vertx.setTimer(remainingMs, t -> echoed.completeExceptionally(
                new StoreException("store " + describe() + " did not answer the handshake PING")));
        echoed.whenComplete((echo, error) -> context.runOnContext(v -> {
            vertx.cancelTimer(timer);
            if (error == null && echo == nonce) {
                ready = true;
                LOG.debugf("connected to store %s", describe());
                established.done(null);
                pump();
                return;
            }
            StoreException why = error instanceof StoreException se ? se
                    : error != null ? new StoreException(error.getMessage(), error)
                    : new StoreProtocolException("store " + describe() + " echoed PING nonce " + echo + " instead of " + nonce);
            if (candidate == socket) {
                socket = null;
                inFlight.clear();
                candidate.close();
            }
            established.done(why);
        }));
    }

    /** The connection dropped: fail what was written, keep what was not, and reconnect in the background. */
    private void onConnectionLost() {
        socket = null;
        boolean wasReady = ready;
        ready = false;
        waitOutstanding = false;
        input = new FrameInput();
        List<Answer> written = new ArrayList<>(inFlight);
        inFlight.clear();
        StoreException lost = lost();
        for (Answer answer : written) {
            answer.fail(lost);
        }
        if (failure != null || !wasReady) {
            return;
        }
        for (Runnable listener : lostListeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                LOG.warnf(e, "store %s: a connection-lost listener failed", describe());
            }
        }
        if (failure != null) {
            return; // a listener closed this client: it wants no reconnect
        }
        LOG.warnf("connection to store %s lost; reconnecting for up to %s", describe(), DurationText.of(connectTimeout));
        establish(System.nanoTime() + connectTimeout.toNanos(), FIRST_RETRY_DELAY_MS, null, error -> {
            if (error == null) {
                reconnects++;
                LOG.infof("reconnected to store %s", describe());
            } else if (failure != null) {
                // Closed meanwhile (by the user, or Vert.x shutting down): nobody waits for this connection.
                LOG.debugf("store %s: reconnect abandoned: %s", describe(), error.getMessage());
            } else {
                LOG.errorf("store %s: %s", describe(), error.getMessage());
                failAll(new StoreException("connection to store " + describe() + " lost and not re-established within "
                        + DurationText.of(connectTimeout), error));
            }
        });
    }

    /** Drops the current connection on purpose (its answers can no longer be trusted); a reconnect follows. */
    private void abandonConnection(String reason) {
        NetSocket current = socket;
        if (current == null) {
            return;
        }
        LOG.warnf("store %s: dropping the connection: %s", describe(), reason);
        onConnectionLost();
        current.close();
    }

    // ---- sending ----------------------------------------------------------------------------

    /**
     * A frame to write; {@code answer} takes its answer (null for SET-like frames, which have none);
     * {@code onWritten} completes a fire-and-forget request once its frame is handed to the socket.
     */
    private record Outbound(Buffer frame, Answer answer, CompletableFuture<Void> onWritten, Outbound then) {
        Outbound(Buffer frame, Answer answer) {
            this(frame, answer, null, null);
        }

        Outbound(Buffer frame, Answer answer, CompletableFuture<Void> onWritten) {
            this(frame, answer, onWritten, null);
        }

        /** Nobody waits for it any more (its caller cancelled): it must not be written at all. */
        boolean abandoned() {
            return answer != null ? answer.abandoned() : onWritten != null && onWritten.isDone();
        }
    }

    /** SET, APPEND, MULTI_SET, QUEUE_PUSH: no answer, so they may pass requests held back behind a WAIT. */
    private void fireAndForget(Buffer frame, CompletableFuture<Void> done) {
        enqueue(new Outbound(frame, null, done));
    }

    private void enqueue(Outbound outbound) {
        toSend.addLast(outbound);
        pump();
    }

    /**
     * Writes what may go out now: nothing before the handshake; frames without an answer always
     * (a set on this client must be able to release a wait on it); answered frames only while no
     * WAIT is outstanding, as the WAIT's late answer would otherwise be mistaken for theirs.
     */
    private void pump() {
        if (failure != null || socket == null || !ready) {
            return;
        }
        Iterator<Outbound> queued = toSend.iterator();
        while (queued.hasNext()) {
            Outbound next = queued.next();
            if (next.abandoned()) {
                queued.remove(); // its caller was told it failed: it must have no effect
                continue;
            }
            // Pipelining: the server holds answered requests behind its pending WAIT, so only a second
            // WAIT must stay here (a CANCEL_WAIT must name the wait the server is blocked on).
            boolean held = pipelineWaits ? next.answer instanceof PendingWait : next.answer != null;
            if (held && waitOutstanding) {
                continue;
            }
            queued.remove();
            write(next);
            if (next.answer instanceof PendingWait wait) {
                wait.state = WaitState.SENT;
                waitOutstanding = true;
            }
        }
    }

    private void write(Outbound outbound) {
        if (outbound.answer != null) {
            inFlight.addLast(outbound.answer);
        }
        if (outbound.then != null) {
            // WAIT and its follow-up in one write: one packet, one round trip.
            inFlight.addLast(outbound.then.answer);
            socket.write(Buffer.buffer(outbound.frame.length() + outbound.then.frame.length())
                    .appendBuffer(outbound.frame).appendBuffer(outbound.then.frame));
            return;
        }
        if (outbound.onWritten == null) {
            socket.write(outbound.frame);
            return;
        }
        socket.write(outbound.frame).onComplete(written -> {
            if (written.succeeded()) {
                outbound.onWritten.complete(null);
            } else {
                outbound.onWritten.completeExceptionally(failure != null ? failure : lost());
            }
        });
    }

    // ---- receiving --------------------------------------------------------------------------

    private void onData(Buffer chunk) {
        input.append(chunk);
        try {
            while (socket != null && !input.isEmpty()) {
                Answer head = inFlight.peekFirst();
                if (head == null) {
                    throw new StoreProtocolException("store " + describe() + " sent bytes nobody asked for");
                }
                int mark = input.position();
                if (!head.consume(input)) {
                    input.rewind(mark);
                    break;
                }
                inFlight.pollFirst();
                head.afterConsumed();
            }
        } catch (StoreProtocolException e) {
            abandonConnection("protocol error: " + e.getMessage());
            return;
        }
        input.discardConsumed();
    }

    // ---- failure ----------------------------------------------------------------------------

    private StoreException lost() {
        return new StoreException("connection to store " + describe() + " lost");
    }

    /** Fails everything, for good. */
    private void failAll(StoreException error) {
        if (failure != null) {
            return;
        }
        failure = error;
        List<Answer> pending = new ArrayList<>(inFlight);
        List<CompletableFuture<Void>> unwritten = new ArrayList<>();
        for (Outbound queued : toSend) {
            if (queued.answer != null) {
                pending.add(queued.answer);
            } else if (queued.onWritten != null) {
                unwritten.add(queued.onWritten);
            }
        }
        inFlight.clear();
        toSend.clear();
        for (Answer answer : pending) {
            answer.fail(error);
        }
        for (CompletableFuture<Void> done : unwritten) {
            done.completeExceptionally(error);
        }
    }

    private StoreTimeoutException timeoutError(Duration timeout, List<String> missing) {
        return new StoreTimeoutException("store " + describe() + ": timed out after " + DurationText.of(timeout)
                + " waiting for key(s) " + missing, missing);
    }

    // ---- waits ------------------------------------------------------------------------------

    /**
     * Starts a WAIT for {@code keys}; once they exist, {@code then} (if any) goes out right behind it,
     * ahead of anything queued meanwhile. {@code result} fails if the wait fails; otherwise {@code then}
     * completes it (or, with no follow-up, the wait does).
     */
    private <T> void waitThen(List<String> keys, Duration timeout, CompletableFuture<T> result, Outbound then) {
        waitThen(keys, timeout, result, then, timeout);
    }

    /** As above; {@code reported} is the timeout named in the error (a retried pop waits for less). */
    private <T> void waitThen(List<String> keys, Duration timeout, CompletableFuture<T> result, Outbound then, Duration reported) {
        if (then != null && pipelineWaits) {
            // The follow-up's answer always comes after the WAIT's; it counts only if the wait was satisfied
            // (after a cancel the server still answers the held follow-up, e.g. an empty GET).
            PendingWait wait = new PendingWait(keys, timeout, reported, () -> {});
            Outbound gated = new Outbound(then.frame, new Gated(then.answer, () -> wait.satisfied));
            wait.result.whenComplete((ok, error) -> {
                if (error != null) {
                    result.completeExceptionally(error);
                }
            });
            withdrawWhenCancelled(result, wait);
            wait.start(gated);
            return;
        }
        PendingWait wait = new PendingWait(keys, timeout, reported, then == null ? () -> {} : () -> toSend.addFirst(then));
        wait.result.whenComplete((ok, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else if (then == null) {
                result.complete(null);
            }
        });
        withdrawWhenCancelled(result, wait);
        wait.start(null);
    }

    /** A caller that cancels its wait gets it withdrawn: never sent if still queued, else CANCEL_WAIT. */
    private void withdrawWhenCancelled(CompletableFuture<?> result, PendingWait wait) {
        result.whenComplete((ignored, error) -> {
            if (result.isCancelled()) {
                ContextTasks.tryRun(context, wait::withdraw);
            }
        });
    }

    private enum WaitState { QUEUED, SENT, CANCELLING, DONE }

    /** A WAIT from its deadline timer to its answer, including the CANCEL_WAIT handshake. */
    private final class PendingWait extends Answer {
        final List<String> keys;
        final Duration timeout;
        final Duration reported;
        final Runnable onSatisfied;
        final CompletableFuture<Void> result = new CompletableFuture<>();
        WaitState state = WaitState.QUEUED;
        volatile boolean satisfied;
        private long timerId = -1;

        PendingWait(List<String> keys, Duration timeout, Duration reported, Runnable onSatisfied) {
            this.keys = keys;
            this.timeout = timeout;
            this.reported = reported;
            this.onSatisfied = onSatisfied;
        }

        void start(Outbound followUp) {
            timerId = vertx.setTimer(Math.max(1, timeout.toMillis()), t -> onDeadline());
            enqueue(new Outbound(RequestEncoder.waitFor(WireKeys.onWire(keys)), this, null, followUp));
        }

        @Override
        boolean consume(FrameInput in) {
            if (!in.has(1)) {
                return false;
            }
            int answer = in.readUnsignedByte();
            if (answer == TcpStoreWire.WAIT_STOP_WAITING) {
                satisfied = true;
                return true;
            }
            // CANCELLING: WAIT_CANCELED in the wait's place. Otherwise STOP_WAITING came first (sent before the
            // server saw the cancel) and the WAIT_CANCELED follows in order, read by the CancelAck entry.
            if (state == WaitState.CANCELLING && answer == TcpStoreWire.WAIT_CANCELED) {
                return true;
            }
            throw new StoreProtocolException("WAIT answered " + answer + ", expected STOP_WAITING");
        }

        @Override
        void afterConsumed() {
            vertx.cancelTimer(timerId);
            boolean wasHoldingQueue = state == WaitState.SENT;
            state = WaitState.DONE;
            if (satisfied) {
                onSatisfied.run();
                result.complete(null);
            }
            // If cancelled, the CHECK answers that follow complete the result with the missing keys.
            if (wasHoldingQueue) {
                waitOutstanding = false;
            }
            pump();
        }

        @Override
        void fail(StoreException error) {
            vertx.cancelTimer(timerId);
            state = WaitState.DONE;
            result.completeExceptionally(error);
        }

        private void onDeadline() {
            if (state == WaitState.QUEUED) {
                // Never sent: an earlier wait held the connection (or there was none), so nothing can be checked in time.
                toSend.removeIf(o -> o.answer == this);
                state = WaitState.DONE;
                result.completeExceptionally(timeoutError(reported, keys));
                return;
            }
            if (state != WaitState.SENT || socket == null) {
                return;
            }
            NetSocket cancelledOn = writeCancel();
            // Ask which keys are still missing.
            List<CompletableFuture<Boolean>> present = new ArrayList<>();
            for (String key : keys) {
                CompletableFuture<Boolean> check = new CompletableFuture<>();
                present.add(check);
                write(new Outbound(RequestEncoder.check(List.of(WireKeys.onWire(key))), new Reply<>(ResponseDecoder.checkResult(), check)));
            }
            // A silent server (host gone without closing) must not hold the caller past its deadline for long.
            long graceTimer = vertx.setTimer(CANCEL_GRACE.toMillis(), t -> {
                if (!result.isDone() && socket == cancelledOn) {
                    abandonConnection("no answer to CANCEL_WAIT within " + DurationText.of(CANCEL_GRACE));
                }
            });
            CompletableFuture.allOf(present.toArray(CompletableFuture[]::new)).whenComplete((ok, error) -> {
                vertx.cancelTimer(graceTimer);
                if (satisfied) {
                    return;
                }
                if (error != null) {
                    result.completeExceptionally(failure != null ? failure : lost());
                    return;
                }
                List<String> missing = new ArrayList<>();
                for (int i = 0; i < keys.size(); i++) {
                    if (!present.get(i).join()) {
                        missing.add(keys.get(i));
                    }
                }
                result.completeExceptionally(timeoutError(reported, missing.isEmpty() ? keys : missing));
            });
            pump();
        }

        /**
         * The caller gave up before the deadline: the wait goes away without a trace (never sent if it
         * was still queued; CANCEL_WAIT if it was sent), and the connection is free for the next wait.
         */
        void withdraw() {
            vertx.cancelTimer(timerId);
            result.cancel(false);
            if (state == WaitState.QUEUED) {
                toSend.removeIf(o -> o.answer == this);
                state = WaitState.DONE;
                return;
            }
            if (state != WaitState.SENT || socket == null) {
                return; // being cancelled at its deadline already, or answered
            }
            NetSocket cancelledOn = writeCancel();
            // As at a deadline: a server that never answers the cancel would hold every later wait here.
            vertx.setTimer(CANCEL_GRACE.toMillis(), t -> {
                if (state == WaitState.CANCELLING && socket == cancelledOn) {
                    abandonConnection("no answer to CANCEL_WAIT within " + DurationText.of(CANCEL_GRACE));
                }
            });
            pump();
        }

        /** Writes CANCEL_WAIT for this (sent) wait; returns the connection it went out on. */
        private NetSocket writeCancel() {
            state = WaitState.CANCELLING;
            NetSocket cancelledOn = socket;
            socket.write(RequestEncoder.cancelWait());
            inFlight.addLast(new CancelAck(() -> satisfied));
            // After CANCEL_WAIT the server sends nothing late for this WAIT, so answers are in order
            // again: the queue may go out.
            waitOutstanding = false;
            return cancelledOn;
        }
    }

    // ---- helpers ----------------------------------------------------------------------------

    /** Runs {@code action} on the client's context, or fails {@code result} if the client is closed or failed for good. */
    private void onContext(CompletableFuture<?> result, Runnable action) {
        boolean queued = ContextTasks.tryRun(context, () -> {
            if (failure != null) {
                result.completeExceptionally(failure);
                return;
            }
            if (result.isDone()) {
                return; // cancelled before it got here: nothing to send
            }
            action.run();
        });
        if (!queued) {
            // The client's Vert.x has shut down: its event loop runs nothing any more.
            StoreException why = failure;
            result.completeExceptionally(why != null ? why
                    : new StoreException("store client for " + describe() + " was closed: Vert.x is shut down"));
        }
    }

    /** Refuses keys the server would refuse: sending one would get this whole connection closed. */
    private boolean rejectInvalidKeys(List<String> keys, CompletableFuture<?> result) {
        return rejected(StoreArguments.checkKeys(keys, limits), result);
    }

    private boolean rejectInvalidKey(String key, CompletableFuture<?> result) {
        return rejected(StoreArguments.checkKey(key, limits), result);
    }

    private boolean rejectInvalidValue(byte[] value, CompletableFuture<?> result) {
        return rejected(StoreArguments.checkValue(value, limits), result);
    }

    private static boolean rejected(RuntimeException problem, CompletableFuture<?> result) {
        if (problem == null) {
            return false;
        }
        result.completeExceptionally(problem);
        return true;
    }

    private static <T> Uni<T> toUni(CompletableFuture<T> future) {
        return Uni.createFrom().completionStage(future);
    }
}
