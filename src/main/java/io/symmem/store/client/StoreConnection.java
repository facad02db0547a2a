package io.symmem.store.client;

import io.symmem.store.ContextTasks;
import io.symmem.store.DurationText;
import io.symmem.store.StoreConnectionLostException;
import io.symmem.store.StoreException;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.RequestEncoder;
import io.symmem.store.wire.ResponseDecoder;
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
import java.util.function.Predicate;
import org.jboss.logging.Logger;

/**
 * One {@link TcpStoreClient}'s connection to its store: connecting with backoff, TCPStore's handshake
 * (VALIDATE, then a PING whose echo lets requests go out), reconnecting after a drop, and the two queues
 * of the protocol: requests not written yet, and requests written and awaiting their answer in wire
 * order (answers are matched to them as bytes come in). While a WAIT is unanswered, requests that expect
 * an answer are held back here ({@link PendingWait} says when it is answered or withdrawn).
 *
 * <p>Everything runs on the client's Vert.x context: no locks; callers hop onto it with {@link #run}.
 */
final class StoreConnection {
    private static final Logger LOG = Logger.getLogger(StoreConnection.class);
    private static final long FIRST_RETRY_DELAY_MS = 50;
    private static final long MAX_RETRY_DELAY_MS = 1000;

    /** Callback of {@link #establish}: null on success, the reason otherwise. */
    interface Established {
        void done(StoreException error);
    }

    final Vertx vertx;
    final Context context;
    private final String host;
    private final int port;
    private final Duration connectTimeout;
    /** The server holds answered requests behind a pending WAIT (a symmem server): only a second WAIT waits here. */
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
    private final List<Runnable> lostListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    StoreConnection(Vertx vertx, String host, int port, Duration connectTimeout, boolean pipelineWaits) {
        this.vertx = vertx;
        this.host = host;
        this.port = port;
        this.connectTimeout = connectTimeout;
        this.pipelineWaits = pipelineWaits;
        this.context = vertx.getOrCreateContext();
    }

    String describe() {
        return host + ":" + port;
    }

    boolean pipelinesWaits() {
        return pipelineWaits;
    }

    long reconnectCount() {
        return reconnects;
    }

    void whenLost(Runnable listener) {
        lostListeners.add(listener);
    }

    /** Connects for the first time (on the context), retrying until the connect timeout; fails for good if it cannot. */
    void open(Established opened) {
        context.runOnContext(v -> {
            netClient = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true)
                    .setConnectTimeout((int) Math.max(1, Math.min(connectTimeout.toMillis(), 10_000))));
            establish(System.nanoTime() + connectTimeout.toNanos(), FIRST_RETRY_DELAY_MS, null, error -> {
                if (error != null) {
                    failAll(error);
                    netClient.close();
                }
                opened.done(error);
            });
        });
    }

    /** Runs {@code action} on the context, or fails {@code result} if the connection is closed or failed for good. */
    void run(CompletableFuture<?> result, Runnable action) {
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

    /** Closes the connection; pending and later requests fail with a {@link StoreException}. Does not block. */
    void close() {
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
                failAll(new StoreConnectionLostException("connection to store " + describe() + " lost and not re-established within "
                        + DurationText.of(connectTimeout), error));
            }
        });
    }

    /** Drops the current connection on purpose (its answers can no longer be trusted); a reconnect follows. */
    void abandon(String reason) {
        NetSocket current = socket;
        if (current == null) {
            return;
        }
        LOG.warnf("store %s: dropping the connection: %s", describe(), reason);
        onConnectionLost();
        current.close();
    }

    /** The current connection, to tell later whether it is still the same one; null while there is none. */
    Object current() {
        return socket;
    }

    // ---- sending ----------------------------------------------------------------------------

    /** SET, APPEND, MULTI_SET, QUEUE_PUSH: no answer, so they may pass requests held back behind a WAIT. */
    void fireAndForget(Buffer frame, CompletableFuture<Void> done) {
        enqueue(new Outbound(frame, null, done));
    }

    void enqueue(Outbound outbound) {
        toSend.addLast(outbound);
        pump();
    }

    /** Puts {@code outbound} first in line (a wait's follow-up, ahead of anything queued meanwhile). */
    void enqueueFirst(Outbound outbound) {
        toSend.addFirst(outbound);
    }

    /** Drops queued requests whose answer {@code matches} (a wait withdrawn before it went out). */
    void unqueue(Predicate<Answer> matches) {
        toSend.removeIf(o -> o.answer() != null && matches.test(o.answer()));
    }

    /**
     * Writes what may go out now: nothing before the handshake; frames without an answer always
     * (a set on this client must be able to release a wait on it); answered frames only while no
     * WAIT is outstanding, as the WAIT's late answer would otherwise be mistaken for theirs.
     */
    void pump() {
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
            boolean held = pipelineWaits ? next.answer() instanceof PendingWait : next.answer() != null;
            if (held && waitOutstanding) {
                continue;
            }
            queued.remove();
            write(next);
            if (next.answer() instanceof PendingWait wait) {
                wait.sent();
                waitOutstanding = true;
            }
        }
    }

    /** Writes now, past the queue (the CHECKs of a wait at its deadline). */
    void write(Outbound outbound) {
        if (outbound.answer() != null) {
            inFlight.addLast(outbound.answer());
        }
        if (outbound.then() != null) {
            // WAIT and its follow-up in one write: one packet, one round trip.
            inFlight.addLast(outbound.then().answer());
            socket.write(Buffer.buffer(outbound.frame().length() + outbound.then().frame().length())
                    .appendBuffer(outbound.frame()).appendBuffer(outbound.then().frame()));
            return;
        }
        if (outbound.onWritten() == null) {
            socket.write(outbound.frame());
            return;
        }
        socket.write(outbound.frame()).onComplete(written -> {
            if (written.succeeded()) {
                outbound.onWritten().complete(null);
            } else {
                outbound.onWritten().completeExceptionally(failure != null ? failure : lost());
            }
        });
    }

    /**
     * Writes CANCEL_WAIT for the wait the server holds, with {@code ack} to read its answer. After it the
     * server sends nothing late for that WAIT, so answers are in order again and the queue may go out.
     */
    void writeCancel(Answer ack) {
        socket.write(RequestEncoder.cancelWait());
        inFlight.addLast(ack);
        waitOutstanding = false;
    }

    /** The outstanding WAIT was answered: held-back requests may go out. */
    void waitAnswered() {
        waitOutstanding = false;
        pump();
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
            abandon("protocol error: " + e.getMessage());
            return;
        }
        input.discardConsumed();
    }

    // ---- failure ----------------------------------------------------------------------------

    StoreException lost() {
        return new StoreConnectionLostException("connection to store " + describe() + " lost");
    }

    /** Why requests fail now: the failure for good, or the lost connection. */
    StoreException failureOrLost() {
        return failure != null ? failure : lost();
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
            if (queued.answer() != null) {
                pending.add(queued.answer());
            } else if (queued.onWritten() != null) {
                unwritten.add(queued.onWritten());
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
}
