package io.symmem.store.client;

import io.smallrye.mutiny.Uni;
import io.symmem.store.Store;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.server.StoreServer;
import io.symmem.store.wire.Popped;
import io.symmem.store.wire.RequestEncoder;
import io.symmem.store.wire.ResponseDecoder;
import io.symmem.store.wire.StoreArguments;
import io.symmem.store.wire.WireKeys;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

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
 *       CHECK per awaited key, so the {@link io.symmem.store.StoreTimeoutException} names the keys still missing. If the
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
 * <p>All mutable state is confined to one Vert.x context; public methods hop onto it. This class is
 * the operations (frames built, keys checked, answers decoded); {@link StoreConnection} is the
 * connection and its queues, {@link PendingWait} the wait protocol.
 */
public final class TcpStoreClient implements Store {

    /** How long after a wait's deadline the server may take to answer CANCEL_WAIT before we drop the connection. */
    public static final Duration CANCEL_GRACE = Duration.ofSeconds(2);

    private final StoreConnection connection;
    private final StoreLimits limits;

    private TcpStoreClient(Vertx vertx, String host, int port, Duration connectTimeout, Options options) {
        this.limits = options.limits();
        this.connection = new StoreConnection(vertx, host, port, connectTimeout, options.pipelineWaits());
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
        client.connection.open(error -> {
            if (error == null) {
                connected.complete(client);
            } else {
                connected.completeExceptionally(error);
            }
        });
        return Uni.createFrom().completionStage(connected);
    }

    @Override
    public String describe() {
        return connection.describe();
    }

    /** True if this client pipelines WAIT and its follow-up ({@link Options#pipelineWaits()}). */
    public boolean pipelinesWaits() {
        return connection.pipelinesWaits();
    }

    /**
     * Runs {@code listener} (on this client's context) each time an established connection drops,
     * before the client tries to reconnect: for a caller to whom a lost connection means the store (or
     * its host) is gone, such as liveness. Not run for {@link #close()}.
     */
    public void whenConnectionLost(Runnable listener) {
        connection.whenLost(java.util.Objects.requireNonNull(listener, "listener must not be null"));
    }

    /** Connections made after the first one; for tests and diagnostics. */
    public long reconnectCount() {
        return connection.reconnectCount();
    }

    // ---- operations -------------------------------------------------------------------------

    @Override
    public Uni<Void> set(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        connection.run(done, () -> connection.fireAndForget(RequestEncoder.set(WireKeys.onWire(key), value), done));
        return toUni(done);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        connection.run(done, () -> connection.fireAndForget(RequestEncoder.append(WireKeys.onWire(key), value), done));
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
        connection.run(done, () -> connection.fireAndForget(RequestEncoder.multiSet(WireKeys.onWire(keys), values), done));
        return toUni(done);
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        connection.run(done, () -> connection.fireAndForget(RequestEncoder.queuePush(WireKeys.onWire(key), value), done));
        return toUni(done);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        CompletableFuture<byte[]> value = new CompletableFuture<>();
        if (rejectInvalidKey(key, value)) {
            return toUni(value);
        }
        connection.run(value, () -> PendingWait.waitThen(connection, List.of(key), timeout, value,
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
        connection.run(values, () -> PendingWait.waitThen(connection, copy, timeout, values, new Outbound(RequestEncoder.multiGet(WireKeys.onWire(copy)),
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
        connection.run(value, () -> popUntil(key, timeout, deadline, value));
        return toUni(value);
    }

    private void popUntil(String key, Duration timeout, long deadline, CompletableFuture<byte[]> value) {
        if (value.isDone()) {
            return; // the caller gave up between two rounds
        }
        long remainingNanos = deadline - System.nanoTime();
        if (remainingNanos <= 0) {
            value.completeExceptionally(PendingWait.timeoutError(describe(), timeout, List.of(key)));
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
                connection.context.runOnContext(v -> popUntil(key, timeout, deadline, value));
            }
        });
        PendingWait.waitThen(connection, List.of(key), Duration.ofNanos(remainingNanos), popped, new Outbound(RequestEncoder.queuePop(WireKeys.onWire(key)),
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
        connection.run(done, () -> PendingWait.waitThen(connection, copy, timeout, done, null));
        return toUni(done);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result)) {
            return toUni(result);
        }
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.add(WireKeys.onWire(key), delta),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result) || rejectInvalidValue(expected, result) || rejectInvalidValue(desired, result)) {
            return toUni(result);
        }
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.compareSet(WireKeys.onWire(key), expected, desired),
                new Reply<>(ResponseDecoder.value(limits.maxValueBytes()), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        if (rejectInvalidKeys(keys, result)) {
            return toUni(result);
        }
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.check(WireKeys.onWire(keys)),
                new Reply<>(ResponseDecoder.checkResult(), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        CompletableFuture<Long> deleted = new CompletableFuture<>();
        if (rejectInvalidKey(key, deleted)) {
            return toUni(deleted).map(n -> n == 1);
        }
        connection.run(deleted, () -> connection.enqueue(new Outbound(RequestEncoder.deleteKey(WireKeys.onWire(key)),
                new Reply<>(ResponseDecoder.int64(), deleted))));
        return toUni(deleted).map(n -> n == 1);
    }

    /** Number of keys in the whole store (GETNUMKEYS), including keys of other clients; queues are not counted. */
    @Override
    public Uni<Long> numKeys() {
        CompletableFuture<Long> result = new CompletableFuture<>();
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.getNumKeys(),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    /** LIST_KEYS, with the "/" prefix removed; keys without it (not set through a TCPStore-style client) are left out. */
    @Override
    public Uni<List<String>> listKeys() {
        CompletableFuture<List<String>> result = new CompletableFuture<>();
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.listKeys(),
                new Reply<>(ResponseDecoder.keys(limits.maxKeyBytes(), Integer.MAX_VALUE - 8), result))));
        return toUni(result).map(WireKeys::fromWire);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result)) {
            return toUni(result);
        }
        connection.run(result, () -> connection.enqueue(new Outbound(RequestEncoder.queueLength(WireKeys.onWire(key)),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    /** Round trip to the server (PING); fails if the echoed nonce differs. */
    @Override
    public Uni<Void> ping() {
        CompletableFuture<Integer> echoed = new CompletableFuture<>();
        int nonce = (int) System.nanoTime();
        connection.run(echoed, () -> connection.enqueue(new Outbound(RequestEncoder.ping(nonce),
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
        connection.close();
    }

    // ---- helpers ----------------------------------------------------------------------------

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
