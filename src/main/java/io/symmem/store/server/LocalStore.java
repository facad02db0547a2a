package io.symmem.store.server;

import io.smallrye.mutiny.Uni;
import io.symmem.store.ContextTasks;
import io.symmem.store.CounterValues;
import io.symmem.store.DurationText;
import io.symmem.store.Store;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.wire.Popped;
import io.symmem.store.wire.QueryType;
import io.symmem.store.wire.StoreArguments;
import io.symmem.store.wire.WireKeys;
import io.vertx.core.Context;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The store seen from the process that hosts it: operations run on the server's context against its
 * {@link StoreState} directly, without TCP, so the hosting rank pays no socket round trip and has no
 * one-wait-per-connection limit (every wait here is independent). Keys are the ones TCP clients use
 * (the "/" wire prefix is added here too), so a key set here is the key a PyTorch client reads.
 *
 * <p>Obtained from {@link StoreServer#localStore()}. Closing it fails its pending waits; the server runs on.
 * Cancelling an operation's Uni (a caller that gave up) drops its wait from the server's state at once,
 * and an operation cancelled before it ran does not run.
 */
public final class LocalStore implements Store {

    private final Context context;
    private final StoreState state;
    private final StoreStatistics statistics;
    private final StoreLimits limits;
    private final String description;
    /** Waits not resolved yet, so close() can fail them. Touched on the context only. */
    private final Set<LocalWait> pendingWaits = Collections.newSetFromMap(new IdentityHashMap<>());
    private volatile StoreException closed;

    LocalStore(Context context, StoreState state, StoreStatistics statistics, StoreLimits limits, String description) {
        this.context = context;
        this.state = state;
        this.statistics = statistics;
        this.limits = limits;
        this.description = description;
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return run(QueryType.SET, StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> {
                    state.set(WireKeys.inState(key), value);
                    return null;
                });
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return waitThen(QueryType.GET, StoreArguments.checkKey(key, limits), List.of(key), timeout,
                () -> state.get(WireKeys.inState(key)));
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return run(QueryType.ADD, StoreArguments.checkKey(key, limits), () -> {
            try {
                return state.add(WireKeys.inState(key), delta);
            } catch (StoreProtocolException e) {
                // Over TCP this costs the connection; here it is just a refused argument.
                throw CounterValues.notAnInteger(description, key);
            }
        });
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return waitThen(QueryType.WAIT, StoreArguments.checkKeys(keys, limits), keys, timeout, () -> null);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return run(QueryType.CHECK, StoreArguments.checkKeys(keys, limits), () -> state.containsAll(WireKeys.inState(keys)));
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return run(QueryType.DELETE_KEY, StoreArguments.checkKey(key, limits), () -> state.delete(WireKeys.inState(key)));
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return run(QueryType.COMPARE_SET, StoreArguments.first(StoreArguments.checkKey(key, limits),
                StoreArguments.checkValue(expected, limits), StoreArguments.checkValue(desired, limits)),
                () -> state.compareSet(WireKeys.inState(key), expected, desired));
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return run(QueryType.APPEND, StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> {
                    state.append(WireKeys.inState(key), value);
                    return null;
                });
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return waitThen(QueryType.MULTI_GET, StoreArguments.checkKeys(keys, limits), keys, timeout,
                () -> state.getAll(WireKeys.inState(keys)));
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        RuntimeException problem = StoreArguments.checkMultiSet(keys, values, limits);
        return run(QueryType.MULTI_SET, problem, () -> {
            state.setAll(WireKeys.inState(keys), List.copyOf(values));
            return null;
        });
    }

    @Override
    public Uni<Long> numKeys() {
        return run(QueryType.GETNUMKEYS, null, () -> (long) state.size());
    }

    @Override
    public Uni<List<String>> listKeys() {
        return run(QueryType.LIST_KEYS, null, () -> WireKeys.fromState(state.keys()));
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return run(QueryType.QUEUE_PUSH, StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> {
                    state.queuePush(WireKeys.inState(key), value);
                    return null;
                });
    }

    /** Pops at once if the queue holds a value, otherwise waits for a push (one push wakes one pop). */
    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        RuntimeException problem = StoreArguments.checkKey(key, limits);
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        if (problem != null) {
            result.completeExceptionally(problem);
            return Uni.createFrom().completionStage(result);
        }
        String stateKey = WireKeys.inState(key);
        long deadline = System.nanoTime() + timeout.toNanos();
        onContext(result, () -> popUntil(key, stateKey, timeout, deadline, result));
        return Uni.createFrom().completionStage(result);
    }

    private void popUntil(String key, String stateKey, Duration timeout, long deadline, CompletableFuture<byte[]> result) {
        statistics.served(QueryType.QUEUE_POP);
        Popped popped = state.queuePop(stateKey);
        if (popped.value() != null) {
            result.complete(popped.value());
            return;
        }
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            result.completeExceptionally(timeoutError(timeout, List.of(key)));
            return;
        }
        CompletableFuture<Void> pushed = new CompletableFuture<>();
        pushed.whenComplete((ok, error) -> {
            if (error != null) {
                result.completeExceptionally(error instanceof StoreTimeoutException ? timeoutError(timeout, List.of(key)) : error);
            } else if (!result.isDone()) {
                popUntil(key, stateKey, timeout, deadline, result);
            }
        });
        new LocalWait(List.of(key), Duration.ofNanos(remaining), pushed).startFor(result);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return run(QueryType.QUEUE_LEN, StoreArguments.checkKey(key, limits), () -> state.queueLength(WireKeys.inState(key)));
    }

    @Override
    public Uni<Void> ping() {
        return run(QueryType.PING, null, () -> null);
    }

    /** Fails this store's pending waits; the server and its data are untouched. */
    @Override
    public void close() {
        StoreException error = new StoreException("local store " + description + " was closed");
        closed = error;
        // Not run when the server stopped first: it has failed the waits already.
        ContextTasks.tryRun(context, () -> failPendingWaits(error));
    }

    /** The server is stopping (called on its context): every wait fails, later calls fail at once. */
    void serverStopped() {
        StoreException error = new StoreException("store server " + description + " was stopped");
        if (closed == null) {
            closed = error;
        }
        failPendingWaits(error);
    }

    private void failPendingWaits(StoreException error) {
        for (LocalWait wait : new ArrayList<>(pendingWaits)) {
            wait.fail(error);
        }
    }

    // ---- plumbing ---------------------------------------------------------------------------

    /** Runs {@code body} on the server's context unless {@code problem} refuses the arguments. */
    private <T> Uni<T> run(QueryType type, RuntimeException problem, Supplier<T> body) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (problem != null) {
            result.completeExceptionally(problem);
        } else {
            onContext(result, () -> {
                statistics.served(type);
                result.complete(body.get());
            });
        }
        return Uni.createFrom().completionStage(result);
    }

    /** Waits until every key exists, then runs {@code read} on the context in the same step. */
    private <T> Uni<T> waitThen(QueryType type, RuntimeException problem, List<String> keys, Duration timeout, Supplier<T> read) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (problem != null) {
            result.completeExceptionally(problem);
            return Uni.createFrom().completionStage(result);
        }
        List<String> copy = List.copyOf(keys);
        onContext(result, () -> {
            statistics.served(type);
            CompletableFuture<Void> present = new CompletableFuture<>();
            present.whenComplete((ok, error) -> {
                if (error != null) {
                    result.completeExceptionally(error);
                } else {
                    result.complete(read.get());
                }
            });
            new LocalWait(copy, timeout, present).startFor(result);
        });
        return Uni.createFrom().completionStage(result);
    }

    private void onContext(CompletableFuture<?> result, Runnable action) {
        StoreException refused = closed;
        if (refused != null) {
            result.completeExceptionally(refused);
            return;
        }
        boolean queued = ContextTasks.tryRun(context, () -> {
            if (closed != null) {
                result.completeExceptionally(closed);
                return;
            }
            if (result.isDone()) {
                return; // cancelled before it ran: its caller was told it did not happen
            }
            try {
                action.run();
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        if (!queued) {
            result.completeExceptionally(new StoreException("store server " + description + " was stopped"));
        }
    }

    private StoreTimeoutException timeoutError(Duration timeout, List<String> missing) {
        return new StoreTimeoutException("store " + description + ": timed out after " + DurationText.of(timeout)
                + " waiting for key(s) " + missing, missing);
    }

    /** One wait on the state, with its own identity as owner so that waits never disturb each other. */
    private final class LocalWait {
        private final List<String> keys;
        private final Duration timeout;
        private final CompletableFuture<Void> done;
        private long timerId = -1;

        LocalWait(List<String> keys, Duration timeout, CompletableFuture<Void> done) {
            this.keys = keys;
            this.timeout = timeout;
            this.done = done;
        }

        /** Runs on the context; the wait is dropped as soon as {@code caller} is cancelled. */
        void startFor(CompletableFuture<?> caller) {
            if (state.awaitKeys(this, WireKeys.inState(keys), this::ready)) {
                done.complete(null);
                return;
            }
            pendingWaits.add(this);
            timerId = context.owner().setTimer(Math.max(1, timeout.toMillis()), t -> expire());
            caller.whenComplete((ignored, error) -> {
                if (caller.isCancelled()) {
                    ContextTasks.tryRun(context, this::drop);
                }
            });
        }

        /** Nobody waits any more: forget the wait (no answer, no timeout), as TCPStore does on CANCEL_WAIT. */
        private void drop() {
            if (pendingWaits.remove(this)) {
                context.owner().cancelTimer(timerId);
                state.cancelWaits(this);
            }
        }

        private void ready() {
            context.owner().cancelTimer(timerId);
            pendingWaits.remove(this);
            done.complete(null);
        }

        private void expire() {
            if (!pendingWaits.remove(this)) {
                return;
            }
            state.cancelWaits(this);
            List<String> missing = new ArrayList<>();
            for (String key : keys) {
                if (!state.isPresent(WireKeys.inState(key))) {
                    missing.add(key);
                }
            }
            done.completeExceptionally(timeoutError(timeout, missing.isEmpty() ? keys : missing));
        }

        void fail(StoreException error) {
            context.owner().cancelTimer(timerId);
            pendingWaits.remove(this);
            state.cancelWaits(this);
            done.completeExceptionally(error);
        }
    }
}
