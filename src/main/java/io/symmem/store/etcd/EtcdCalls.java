package io.symmem.store.etcd;

import io.symmem.store.DurationText;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimitExceededException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Runs one store operation against the cluster until it succeeds, fails for good, or its deadline
 * passes. A member that is down, or lost its leader, answers UNAVAILABLE: the operation is tried
 * again (the client picks another member), with a short backoff, until the deadline; then it fails
 * naming the store and the last error, so a cluster that cannot make progress is never mistaken for
 * an answer. Only operations that are safe to repeat are given here: plain puts and reads, and
 * conditional writes made idempotent by {@link OnceWrites}.
 */
final class EtcdCalls {

    private static final long FIRST_BACKOFF_MS = 20;
    private static final long MAX_BACKOFF_MS = 500;
    /**
     * A write that lost to a concurrent writer waits a random time below this bound (doubling per lost
     * try, from 1 ms): clients that all retried at once would collide again, and 64 ranks adding to one
     * counter would spend their deadline colliding.
     */
    private static final long MAX_CONFLICT_BACKOFF_MS = 64;

    private final ScheduledExecutorService timer;
    private final String storeName;

    EtcdCalls(ScheduledExecutorService timer, String storeName) {
        this.timer = timer;
        this.storeName = storeName;
    }

    ScheduledExecutorService timer() {
        return timer;
    }

    /**
     * @param what the operation, for messages ("set of key 'a'")
     * @param budget the operation's whole time, for messages
     * @param deadlineNanos when to give up (System.nanoTime)
     * @param attempt one try; it is called again after a transient failure
     */
    <T> CompletableFuture<T> retrying(String what, Duration budget, long deadlineNanos, Supplier<CompletableFuture<T>> attempt) {
        CompletableFuture<T> result = new CompletableFuture<>();
        AtomicReference<Throwable> last = new AtomicReference<>();
        long remaining = deadlineNanos - System.nanoTime();
        var deadline = timer.schedule(() -> result.completeExceptionally(notAnswered(what, budget, last.get())),
                Math.max(0, remaining), TimeUnit.NANOSECONDS);
        result.whenComplete((v, e) -> deadline.cancel(false));
        tryOnce(what, budget, deadlineNanos, attempt, result, last, 0);
        return result;
    }

    private <T> void tryOnce(String what, Duration budget, long deadlineNanos, Supplier<CompletableFuture<T>> attempt,
            CompletableFuture<T> result, AtomicReference<Throwable> last, int tries) {
        if (result.isDone()) {
            return;
        }
        CompletableFuture<T> call;
        try {
            call = attempt.get();
        } catch (RuntimeException e) {
            call = CompletableFuture.failedFuture(e);
        }
        call.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            Throwable cause = EtcdFailures.unwrap(error);
            if (!EtcdFailures.worthRetrying(cause)) {
                result.completeExceptionally(finalError(what, cause));
                return;
            }
            if (!(cause instanceof EtcdFailures.ConflictRetry)) {
                last.set(cause);
            }
            long backoffMs = cause instanceof EtcdFailures.ConflictRetry
                    ? ThreadLocalRandom.current().nextLong(Math.min(MAX_CONFLICT_BACKOFF_MS, 1L << Math.min(tries, 10)) + 1)
                    : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(tries, 10));
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMs) >= deadlineNanos) {
                result.completeExceptionally(notAnswered(what, budget, last.get()));
                return;
            }
            if (backoffMs == 0) {
                tryOnce(what, budget, deadlineNanos, attempt, result, last, tries + 1);
            } else {
                timer.schedule(() -> tryOnce(what, budget, deadlineNanos, attempt, result, last, tries + 1),
                        backoffMs, TimeUnit.MILLISECONDS);
            }
        });
    }

    /** The cluster did not complete the operation in time: unreachable, or no quorum behind the member. */
    StoreException notAnswered(String what, Duration budget, Throwable last) {
        return new StoreException("etcd store " + storeName + ": " + what + " not answered within " + DurationText.of(budget)
                + (last == null ? " (no member answered; a member without quorum cannot answer)"
                        : " (last error: " + EtcdFailures.describe(last) + ")"));
    }

    private RuntimeException finalError(String what, Throwable cause) {
        if (cause instanceof StoreException || cause instanceof IllegalArgumentException) {
            return (RuntimeException) cause;
        }
        if (EtcdFailures.tooLarge(cause)) {
            return new StoreLimitExceededException("etcd store " + storeName + ": " + what + " refused by etcd: the request "
                    + "exceeds its --max-request-bytes (" + EtcdFailures.describe(cause) + ")");
        }
        if (EtcdFailures.tooManyOps(cause)) {
            return new StoreLimitExceededException("etcd store " + storeName + ": " + what + " refused by etcd: more keys "
                    + "in one transaction than its --max-txn-ops (" + EtcdFailures.describe(cause) + ")");
        }
        return new StoreException("etcd store " + storeName + ": " + what + " failed: " + EtcdFailures.describe(cause), cause);
    }
}
