package io.symmem.store.client;

import io.symmem.store.ContextTasks;
import io.symmem.store.DurationText;
import io.symmem.store.StoreException;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.RequestEncoder;
import io.symmem.store.wire.ResponseDecoder;
import io.symmem.store.wire.TcpStoreWire;
import io.symmem.store.wire.WireKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One WAIT from its deadline timer to its answer, including TCPStore's CANCEL_WAIT handshake: at the
 * deadline the client sends CANCEL_WAIT and one CHECK per key, so the timeout names the keys still
 * missing; a caller that gives up earlier withdraws it the same way (or, not sent yet, it never goes
 * out). A server that stays silent after the cancel loses its connection {@link TcpStoreClient#CANCEL_GRACE}
 * later. Runs on the connection's context.
 */
final class PendingWait extends Answer {
    private enum State { QUEUED, SENT, CANCELLING, DONE }

    private final StoreConnection connection;
    private final List<String> keys;
    private final Duration timeout;
    /** The timeout named in the error (a retried pop waits for less than its caller asked). */
    private final Duration reported;
    private final Runnable onSatisfied;
    final CompletableFuture<Void> result = new CompletableFuture<>();
    private State state = State.QUEUED;
    volatile boolean satisfied;
    private long timerId = -1;

    private PendingWait(StoreConnection connection, List<String> keys, Duration timeout, Duration reported, Runnable onSatisfied) {
        this.connection = connection;
        this.keys = keys;
        this.timeout = timeout;
        this.reported = reported;
        this.onSatisfied = onSatisfied;
    }

    /**
     * Starts a WAIT for {@code keys}; once they exist, {@code then} (if any) goes out right behind it,
     * ahead of anything queued meanwhile. {@code result} fails if the wait fails; otherwise {@code then}
     * completes it (or, with no follow-up, the wait does). {@code reported} is the timeout named in the
     * error. A caller that cancels {@code result} gets the wait withdrawn.
     */
    static <T> void waitThen(StoreConnection connection, List<String> keys, Duration timeout, CompletableFuture<T> result,
            Outbound then) {
        waitThen(connection, keys, timeout, result, then, timeout);
    }

    /** As above; {@code reported} is the timeout named in the error (a retried pop waits for less). */
    static <T> void waitThen(StoreConnection connection, List<String> keys, Duration timeout, CompletableFuture<T> result,
            Outbound then, Duration reported) {
        if (then != null && connection.pipelinesWaits()) {
            // The follow-up's answer always comes after the WAIT's; it counts only if the wait was satisfied
            // (after a cancel the server still answers the held follow-up, e.g. an empty GET).
            PendingWait wait = new PendingWait(connection, keys, timeout, reported, () -> {});
            Outbound gated = new Outbound(then.frame(), new Gated(then.answer(), () -> wait.satisfied));
            wait.result.whenComplete((ok, error) -> {
                if (error != null) {
                    result.completeExceptionally(error);
                }
            });
            wait.withdrawWhenCancelled(result);
            wait.start(gated);
            return;
        }
        PendingWait wait = new PendingWait(connection, keys, timeout, reported,
                then == null ? () -> {} : () -> connection.enqueueFirst(then));
        wait.result.whenComplete((ok, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
            } else if (then == null) {
                result.complete(null);
            }
        });
        wait.withdrawWhenCancelled(result);
        wait.start(null);
    }

    private void withdrawWhenCancelled(CompletableFuture<?> caller) {
        caller.whenComplete((ignored, error) -> {
            if (caller.isCancelled()) {
                ContextTasks.tryRun(connection.context, this::withdraw);
            }
        });
    }

    /** Arms the deadline and queues the WAIT, with {@code followUp} in the same write if given. */
    private void start(Outbound followUp) {
        timerId = connection.vertx.setTimer(Math.max(1, timeout.toMillis()), t -> onDeadline());
        connection.enqueue(new Outbound(RequestEncoder.waitFor(WireKeys.onWire(keys)), this, null, followUp));
    }

    /** The connection wrote it: from now on it holds the connection until answered or cancelled. */
    void sent() {
        state = State.SENT;
    }

    static StoreTimeoutException timeoutError(String store, Duration timeout, List<String> missing) {
        return new StoreTimeoutException("store " + store + ": timed out after " + DurationText.of(timeout)
                + " waiting for key(s) " + missing, missing);
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
        if (state == State.CANCELLING && answer == TcpStoreWire.WAIT_CANCELED) {
            return true;
        }
        throw new StoreProtocolException("WAIT answered " + answer + ", expected STOP_WAITING");
    }

    @Override
    void afterConsumed() {
        connection.vertx.cancelTimer(timerId);
        boolean wasHoldingQueue = state == State.SENT;
        state = State.DONE;
        if (satisfied) {
            onSatisfied.run();
            result.complete(null);
        }
        // If cancelled, the CHECK answers that follow complete the result with the missing keys.
        if (wasHoldingQueue) {
            connection.waitAnswered();
        } else {
            connection.pump();
        }
    }

    @Override
    void fail(StoreException error) {
        connection.vertx.cancelTimer(timerId);
        state = State.DONE;
        result.completeExceptionally(error);
    }

    private void onDeadline() {
        if (state == State.QUEUED) {
            // Never sent: an earlier wait held the connection (or there was none), so nothing can be checked in time.
            connection.unqueue(a -> a == this);
            state = State.DONE;
            result.completeExceptionally(timeoutError(connection.describe(), reported, keys));
            return;
        }
        if (state != State.SENT || connection.current() == null) {
            return;
        }
        Object cancelledOn = writeCancel();
        // Ask which keys are still missing.
        List<CompletableFuture<Boolean>> present = new ArrayList<>();
        for (String key : keys) {
            CompletableFuture<Boolean> check = new CompletableFuture<>();
            present.add(check);
            connection.write(new Outbound(RequestEncoder.check(List.of(WireKeys.onWire(key))), new Reply<>(ResponseDecoder.checkResult(), check)));
        }
        // A silent server (host gone without closing) must not hold the caller past its deadline for long.
        long graceTimer = connection.vertx.setTimer(TcpStoreClient.CANCEL_GRACE.toMillis(), t -> {
            if (!result.isDone() && connection.current() == cancelledOn) {
                connection.abandon("no answer to CANCEL_WAIT within " + DurationText.of(TcpStoreClient.CANCEL_GRACE));
            }
        });
        CompletableFuture.allOf(present.toArray(CompletableFuture[]::new)).whenComplete((ok, error) -> {
            connection.vertx.cancelTimer(graceTimer);
            if (satisfied) {
                return;
            }
            if (error != null) {
                result.completeExceptionally(connection.failureOrLost());
                return;
            }
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                if (!present.get(i).join()) {
                    missing.add(keys.get(i));
                }
            }
            result.completeExceptionally(timeoutError(connection.describe(), reported, missing.isEmpty() ? keys : missing));
        });
        connection.pump();
    }

    /**
     * The caller gave up before the deadline: the wait goes away without a trace (never sent if it
     * was still queued; CANCEL_WAIT if it was sent), and the connection is free for the next wait.
     */
    void withdraw() {
        connection.vertx.cancelTimer(timerId);
        result.cancel(false);
        if (state == State.QUEUED) {
            connection.unqueue(a -> a == this);
            state = State.DONE;
            return;
        }
        if (state != State.SENT || connection.current() == null) {
            return; // being cancelled at its deadline already, or answered
        }
        Object cancelledOn = writeCancel();
        // As at a deadline: a server that never answers the cancel would hold every later wait here.
        connection.vertx.setTimer(TcpStoreClient.CANCEL_GRACE.toMillis(), t -> {
            if (state == State.CANCELLING && connection.current() == cancelledOn) {
                connection.abandon("no answer to CANCEL_WAIT within " + DurationText.of(TcpStoreClient.CANCEL_GRACE));
            }
        });
        connection.pump();
    }

    /** Writes CANCEL_WAIT for this (sent) wait; returns the connection it went out on. */
    private Object writeCancel() {
        state = State.CANCELLING;
        Object cancelledOn = connection.current();
        connection.writeCancel(new CancelAck(() -> satisfied));
        return cancelledOn;
    }
}
