package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 *   <li>{@code set} completes when its frame has been written to the socket (TCPStore's set returns at
 *       the same point). The server applies one connection's frames in order, so any later request of
 *       this client observes it.</li>
 *   <li>Wait deadlines: at the deadline the client sends CANCEL_WAIT (as TCPStore does) and then one
 *       CHECK per awaited key, so the {@link StoreTimeoutException} names the keys still missing. If the
 *       server had already answered STOP_WAITING before it saw the cancel, the wait succeeds (TCPStore
 *       would throw here; succeeding is the more useful answer). A wait still held back behind another
 *       wait at its deadline fails at once and names all its keys.</li>
 *   <li>When the connection is lost every pending and later request fails with a {@link StoreException}.</li>
 * </ul>
 *
 * <p>All mutable state is confined to one Vert.x context; public methods hop onto it.
 */
public final class TcpStoreClient implements Store {

    private static final Logger LOG = Logger.getLogger(TcpStoreClient.class);
    private static final long FIRST_RETRY_DELAY_MS = 50;
    private static final long MAX_RETRY_DELAY_MS = 1000;

    private final Vertx vertx;
    private final Context context;
    private final String host;
    private final int port;
    private final StoreLimits limits;
    private final FrameInput input = new FrameInput();
    /** Requests not written yet: held back behind an unanswered WAIT. */
    private final ArrayDeque<Outbound> toSend = new ArrayDeque<>();
    /** Requests written and awaiting their answer, in wire order. */
    private final ArrayDeque<Answer> inFlight = new ArrayDeque<>();
    private boolean waitOutstanding;
    private NetClient netClient;
    private NetSocket socket;
    private StoreException failure;

    private TcpStoreClient(Vertx vertx, String host, int port, StoreLimits limits) {
        this.vertx = vertx;
        this.host = host;
        this.port = port;
        this.limits = limits;
        this.context = vertx.getOrCreateContext();
    }

    /** {@link #connect(Vertx, String, int, Duration, StoreLimits)} with default limits. */
    public static Uni<TcpStoreClient> connect(Vertx vertx, String host, int port, Duration connectTimeout) {
        return connect(vertx, host, port, connectTimeout, StoreLimits.defaults());
    }

    /**
     * Connects to the store at host:port, retrying with exponential backoff (50 ms doubling to 1 s)
     * until {@code connectTimeout} has passed, because rank 0's server may come up after the other
     * ranks start. Then sends VALIDATE and a PING and completes once the PING is echoed.
     * Fails with a {@link StoreException} naming the address when the deadline passes.
     */
    public static Uni<TcpStoreClient> connect(
            Vertx vertx, String host, int port, Duration connectTimeout, StoreLimits limits) {
        TcpStoreClient client = new TcpStoreClient(vertx, host, port, limits);
        CompletableFuture<TcpStoreClient> connected = new CompletableFuture<>();
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        client.context.runOnContext(v -> {
            client.netClient = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true)
                    .setConnectTimeout((int) Math.max(1, Math.min(connectTimeout.toMillis(), 10_000))));
            client.attemptConnect(deadline, FIRST_RETRY_DELAY_MS, connectTimeout, connected);
        });
        return Uni.createFrom().completionStage(connected);
    }

    @Override
    public String describe() {
        return host + ":" + port;
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (rejectInvalidKey(key, done) || rejectInvalidValue(value, done)) {
            return toUni(done);
        }
        onContext(done, () -> {
            // SET has no answer, so it may bypass requests held back behind a WAIT (see class doc).
            socket.write(RequestEncoder.set(wireKey(key), value)).onComplete(written -> {
                if (written.succeeded()) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(failure != null ? failure : lost());
                }
            });
        });
        return toUni(done);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        CompletableFuture<byte[]> value = new CompletableFuture<>();
        if (rejectInvalidKey(key, value)) {
            return toUni(value);
        }
        onContext(value, () -> {
            Reply<byte[]> reply = new Reply<>(ResponseDecoder.value(limits.maxValueBytes()), value);
            Outbound getFrame = new Outbound(RequestEncoder.get(wireKey(key)), reply);
            // The GET goes out right behind its satisfied WAIT, ahead of anything queued meanwhile.
            PendingWait wait = new PendingWait(List.of(key), timeout, () -> toSend.addFirst(getFrame));
            wait.result.whenComplete((ok, error) -> {
                if (error != null) {
                    value.completeExceptionally(error);
                }
            });
            wait.start();
        });
        return toUni(value);
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        for (String key : keys) {
            if (rejectInvalidKey(key, done)) {
                return toUni(done);
            }
        }
        if (keys.isEmpty()) {
            done.complete(null);
            return toUni(done);
        }
        onContext(done, () -> {
            PendingWait wait = new PendingWait(List.copyOf(keys), timeout, () -> {});
            wait.result.whenComplete((ok, error) -> {
                if (error != null) {
                    done.completeExceptionally(error);
                } else {
                    done.complete(null);
                }
            });
            wait.start();
        });
        return toUni(done);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        if (rejectInvalidKey(key, result)) {
            return toUni(result);
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.add(wireKey(key), delta),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        for (String key : keys) {
            if (rejectInvalidKey(key, result)) {
                return toUni(result);
            }
        }
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.check(wireKeys(keys)),
                new Reply<>(ResponseDecoder.checkResult(), result))));
        return toUni(result);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        CompletableFuture<Long> deleted = new CompletableFuture<>();
        if (rejectInvalidKey(key, deleted)) {
            return toUni(deleted).map(n -> n == 1);
        }
        onContext(deleted, () -> enqueue(new Outbound(RequestEncoder.deleteKey(wireKey(key)),
                new Reply<>(ResponseDecoder.int64(), deleted))));
        return toUni(deleted).map(n -> n == 1);
    }

    /** Number of keys in the whole store (GETNUMKEYS), including keys of other clients. */
    public Uni<Long> numKeys() {
        CompletableFuture<Long> result = new CompletableFuture<>();
        onContext(result, () -> enqueue(new Outbound(RequestEncoder.getNumKeys(),
                new Reply<>(ResponseDecoder.int64(), result))));
        return toUni(result);
    }

    /** Round trip to the server (PING); fails if the echoed nonce differs. */
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

    /** Closes the connection; pending requests fail with a {@link StoreException}. Does not block. */
    @Override
    public void close() {
        context.runOnContext(v -> {
            if (failure == null) {
                failAll(new StoreException("store client for " + describe() + " was closed"));
            }
            if (socket != null) {
                socket.close();
            }
            if (netClient != null) {
                netClient.close();
            }
        });
    }

    // ---- connecting -------------------------------------------------------------------------

    private void attemptConnect(long deadline, long delayMs, Duration connectTimeout, CompletableFuture<TcpStoreClient> connected) {
        if (failure != null) {
            connected.completeExceptionally(failure);
            return;
        }
        netClient.connect(port, host).onComplete(attempt -> {
            if (attempt.succeeded()) {
                attach(attempt.result());
                handshake(deadline, connected);
                return;
            }
            long remainingMs = (deadline - System.nanoTime()) / 1_000_000;
            if (remainingMs <= 0) {
                StoreException error = new StoreException("could not connect to store " + describe() + " within "
                        + DurationText.of(connectTimeout) + ": " + attempt.cause().getMessage(), attempt.cause());
                failure = error;
                netClient.close();
                connected.completeExceptionally(error);
                return;
            }
            LOG.debugf("store %s not reachable yet (%s); retrying in %d ms", describe(), attempt.cause().getMessage(), delayMs);
            vertx.setTimer(Math.max(1, Math.min(delayMs, remainingMs)), t ->
                    attemptConnect(deadline, Math.min(delayMs * 2, MAX_RETRY_DELAY_MS), connectTimeout, connected));
        });
    }

    private void attach(NetSocket connectedSocket) {
        socket = connectedSocket;
        socket.handler(this::onData);
        socket.closeHandler(v -> {
            if (failure == null) {
                LOG.warnf("connection to store %s lost", describe());
                failAll(lost());
            }
        });
        socket.exceptionHandler(e -> LOG.debugf("store %s connection error: %s", describe(), e));
    }

    /** TCPStore's opening: VALIDATE (no answer), then PING whose echo proves the server accepted us. */
    private void handshake(long deadline, CompletableFuture<TcpStoreClient> connected) {
        int nonce = (int) ProcessHandle.current().pid();
        CompletableFuture<Integer> echoed = new CompletableFuture<>();
        socket.write(RequestEncoder.validate());
        enqueue(new Outbound(RequestEncoder.ping(nonce), new Reply<>(ResponseDecoder.uint32(), echoed)));
        long remainingMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        long timer = vertx.setTimer(remainingMs, t -> {
            if (!echoed.isDone()) {
                failAll(new StoreException("store " + describe() + " did not answer the handshake PING"));
                socket.close();
            }
        });
        echoed.whenComplete((echo, error) -> {
            vertx.cancelTimer(timer);
            if (error != null) {
                connected.completeExceptionally(error);
            } else if (echo != nonce) {
                failAll(new StoreProtocolException("store " + describe() + " echoed PING nonce " + echo + " instead of " + nonce));
                socket.close();
                connected.completeExceptionally(failure);
            } else {
                LOG.debugf("connected to store %s", describe());
                connected.complete(this);
            }
        });
    }

    // ---- sending ----------------------------------------------------------------------------

    /** A frame to write and, unless it is fire-and-forget, the entry that will take its answer. */
    private record Outbound(Buffer frame, Answer answer) {}

    private void enqueue(Outbound outbound) {
        toSend.addLast(outbound);
        pump();
    }

    /** Writes queued requests until the queue is empty or a WAIT is outstanding. */
    private void pump() {
        while (failure == null && !waitOutstanding && !toSend.isEmpty()) {
            Outbound next = toSend.pollFirst();
            write(next);
            if (next.answer instanceof PendingWait wait) {
                wait.state = WaitState.SENT;
                waitOutstanding = true;
            }
        }
    }

    private void write(Outbound outbound) {
        socket.write(outbound.frame);
        if (outbound.answer != null) {
            inFlight.addLast(outbound.answer);
        }
    }

    // ---- receiving --------------------------------------------------------------------------

    private void onData(Buffer chunk) {
        input.append(chunk);
        try {
            while (failure == null && !input.isEmpty()) {
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
            LOG.warnf("protocol error from store %s: %s", describe(), e.getMessage());
            failAll(new StoreException("protocol error from store " + describe() + ": " + e.getMessage(), e));
            socket.close();
            return;
        }
        input.discardConsumed();
    }

    // ---- failure ----------------------------------------------------------------------------

    private StoreException lost() {
        return new StoreException("connection to store " + describe() + " lost");
    }

    private void failAll(StoreException error) {
        if (failure != null) {
            return;
        }
        failure = error;
        List<Answer> pending = new ArrayList<>(inFlight);
        for (Outbound queued : toSend) {
            if (queued.answer != null) {
                pending.add(queued.answer);
            }
        }
        inFlight.clear();
        toSend.clear();
        for (Answer answer : pending) {
            answer.fail(error);
        }
    }

    // ---- answers ----------------------------------------------------------------------------

    /** Takes the answer to one written request off the input. */
    private abstract static class Answer {
        /** Reads the complete answer and returns true, or returns false if more bytes are needed. */
        abstract boolean consume(FrameInput in);

        /** Runs after the entry left the in-flight queue (so follow-up writes land behind it). */
        void afterConsumed() {}

        abstract void fail(StoreException error);
    }

    private static final class Reply<T> extends Answer {
        private final ResponseDecoder<T> decoder;
        private final CompletableFuture<T> result;
        private T value;

        Reply(ResponseDecoder<T> decoder, CompletableFuture<T> result) {
            this.decoder = decoder;
            this.result = result;
        }

        @Override
        boolean consume(FrameInput in) {
            value = decoder.decode(in);
            return value != null;
        }

        @Override
        void afterConsumed() {
            result.complete(value);
        }

        @Override
        void fail(StoreException error) {
            result.completeExceptionally(error);
        }
    }

    private enum WaitState { QUEUED, SENT, CANCELLING, DONE }

    /** A WAIT from its deadline timer to its answer, including the CANCEL_WAIT handshake. */
    private final class PendingWait extends Answer {
        final List<String> keys;
        final Duration timeout;
        final Runnable onSatisfied;
        final CompletableFuture<Void> result = new CompletableFuture<>();
        WaitState state = WaitState.QUEUED;
        private boolean satisfied;
        private long timerId = -1;

        PendingWait(List<String> keys, Duration timeout, Runnable onSatisfied) {
            this.keys = keys;
            this.timeout = timeout;
            this.onSatisfied = onSatisfied;
        }

        void start() {
            timerId = vertx.setTimer(Math.max(1, timeout.toMillis()), t -> onDeadline());
            enqueue(new Outbound(RequestEncoder.waitFor(wireKeys(keys)), this));
        }

        @Override
        boolean consume(FrameInput in) {
            if (!in.has(1)) {
                return false;
            }
            int answer = in.readUnsignedByte();
            if (state == WaitState.SENT) {
                if (answer != TcpStoreWire.WAIT_STOP_WAITING) {
                    throw new StoreProtocolException("WAIT answered " + answer + ", expected STOP_WAITING");
                }
                satisfied = true;
                return true;
            }
            // CANCELLING: either WAIT_CANCELED alone, or STOP_WAITING (sent before the server saw the
            // cancel) followed by WAIT_CANCELED.
            if (answer == TcpStoreWire.WAIT_CANCELED) {
                return true;
            }
            if (answer != TcpStoreWire.WAIT_STOP_WAITING) {
                throw new StoreProtocolException("CANCEL_WAIT answered " + answer);
            }
            if (!in.has(1)) {
                return false;
            }
            int second = in.readUnsignedByte();
            if (second != TcpStoreWire.WAIT_CANCELED) {
                throw new StoreProtocolException("CANCEL_WAIT answered " + second + ", expected WAIT_CANCELED");
            }
            satisfied = true;
            return true;
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
                // Never sent: an earlier wait held the connection, so nothing can be checked in time.
                toSend.removeIf(o -> o.answer == this);
                state = WaitState.DONE;
                result.completeExceptionally(timeoutError(keys));
                return;
            }
            if (state != WaitState.SENT || failure != null) {
                return;
            }
            state = WaitState.CANCELLING;
            socket.write(RequestEncoder.cancelWait());
            // After CANCEL_WAIT the server sends nothing late for this WAIT, so answers are in order
            // again: release the queue, and ask which keys are still missing.
            waitOutstanding = false;
            List<CompletableFuture<Boolean>> present = new ArrayList<>();
            for (String key : keys) {
                CompletableFuture<Boolean> check = new CompletableFuture<>();
                present.add(check);
                write(new Outbound(RequestEncoder.check(List.of(wireKey(key))), new Reply<>(ResponseDecoder.checkResult(), check)));
            }
            CompletableFuture.allOf(present.toArray(CompletableFuture[]::new)).whenComplete((ok, error) -> {
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
                result.completeExceptionally(timeoutError(missing.isEmpty() ? keys : missing));
            });
            pump();
        }

        private StoreTimeoutException timeoutError(List<String> missing) {
            return new StoreTimeoutException("store " + describe() + ": timed out after " + DurationText.of(timeout)
                    + " waiting for key(s) " + missing, missing);
        }
    }

    // ---- helpers ----------------------------------------------------------------------------

    private static String wireKey(String key) {
        return TcpStoreWire.KEY_PREFIX + key;
    }

    private static List<String> wireKeys(List<String> keys) {
        List<String> wire = new ArrayList<>(keys.size());
        for (String key : keys) {
            wire.add(wireKey(key));
        }
        return wire;
    }

    /** Runs {@code action} on the client's context, or fails {@code result} if the client is closed or lost. */
    private void onContext(CompletableFuture<?> result, Runnable action) {
        context.runOnContext(v -> {
            if (failure != null) {
                result.completeExceptionally(failure);
                return;
            }
            action.run();
        });
    }

    /** Refuses keys the server would refuse: sending one would get this whole connection closed. */
    private boolean rejectInvalidKey(String key, CompletableFuture<?> result) {
        if (key == null) {
            result.completeExceptionally(new IllegalArgumentException("key must not be null"));
            return true;
        }
        int bytes = RequestEncoder.keyBytes(wireKey(key));
        if (bytes > limits.maxKeyBytes()) {
            result.completeExceptionally(new IllegalArgumentException(
                    "key of " + bytes + " bytes exceeds the store's limit of " + limits.maxKeyBytes()));
            return true;
        }
        return false;
    }

    private boolean rejectInvalidValue(byte[] value, CompletableFuture<?> result) {
        if (value == null) {
            result.completeExceptionally(new IllegalArgumentException("value must not be null"));
            return true;
        }
        if (value.length > limits.maxValueBytes()) {
            result.completeExceptionally(new IllegalArgumentException(
                    "value of " + value.length + " bytes exceeds the store's limit of " + limits.maxValueBytes()));
            return true;
        }
        return false;
    }

    private static <T> Uni<T> toUni(CompletableFuture<T> future) {
        return Uni.createFrom().completionStage(future);
    }
}
