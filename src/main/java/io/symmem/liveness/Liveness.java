package io.symmem.liveness;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.symmem.store.StoreConnectionLostException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * What this rank knows about the health of its world: nothing wrong yet, or the first
 * {@link WorldFailure}. Whoever notices a dead peer or a lost store reports it here ({@link #fail});
 * every wait of the rank is cut short through it: store waits through {@link #guard}, native waits
 * and device kernels through a listener (the rank aborts the native core), and anything else that
 * asks {@link #check}. The first failure is kept; ranks reported later are added to it.
 */
public final class Liveness {
    private static final Logger LOG = Logger.getLogger(Liveness.class);
    /**
     * How long a guarded store call whose connection dropped waits for the world's failure before it
     * reports the drop itself. The rank that hosts the store going away drops every connection to it at
     * once; the liveness agent hears of it on its own connection and names the rank, usually within
     * milliseconds, but the call's connection may hear first (seen on a loaded machine: the bare drop
     * won by 1 ms).
     */
    static final Duration LOST_STORE_GRACE = Duration.ofSeconds(2);

    private final int rank;
    private final Duration lostStoreGrace;
    private volatile boolean leaving;
    private volatile WorldFailure failure;
    private final CopyOnWriteArrayList<Consumer<WorldFailure>> listeners = new CopyOnWriteArrayList<>();

    public Liveness(int rank) {
        this(rank, LOST_STORE_GRACE);
    }

    Liveness(int rank, Duration lostStoreGrace) {
        this.rank = rank;
        this.lostStoreGrace = lostStoreGrace;
    }

    public int rank() {
        return rank;
    }

    public Optional<WorldFailure> failure() {
        return Optional.ofNullable(failure);
    }

    public boolean failed() {
        return failure != null;
    }

    /**
     * Reports that {@code gone} ranks (possibly none, when only the store is lost) are gone. The first
     * report fails the world and tells every listener; later ones only widen the set of ranks named.
     */
    public void fail(Set<Integer> gone, String reason) {
        fail(gone, reason, false);
    }

    /** As {@link #fail(Set, String)}; {@code storeLost}: the store is gone too, so every store call fails. */
    public void fail(Set<Integer> gone, String reason, boolean storeLost) {
        WorldFailure first;
        synchronized (this) {
            if (failure != null) {
                if (!failure.ranks().containsAll(gone) || (storeLost && !failure.storeLost())) {
                    Set<Integer> all = new TreeSet<>(failure.ranks());
                    all.addAll(gone);
                    failure = new WorldFailure(all, failure.reason() + "; also: " + reason,
                            storeLost || failure.storeLost(), failure.at());
                }
                return;
            }
            first = new WorldFailure(gone, reason, storeLost, Instant.now());
            failure = first;
        }
        LOG.errorf("rank %d: the world has failed: %s", rank, reason);
        for (Consumer<WorldFailure> listener : listeners) {
            if (!listeners.remove(listener)) {
                continue; // whenFailed ran it already
            }
            try {
                listener.accept(first);
            } catch (RuntimeException e) {
                LOG.warnf(e, "rank %d: a liveness listener failed", rank);
            }
        }
    }

    /**
     * The rank has begun to leave in order, so the store may close under it: from now on a dropped store
     * connection is reported at once, without waiting for a world failure that will not come.
     */
    public void leaving() {
        leaving = true;
    }

    /** Throws the failure, naming {@code operation}, if the world has failed. */
    public void check(String operation) {
        WorldFailure f = failure;
        if (f != null) {
            throw f.abort(operation);
        }
    }

    /**
     * Runs {@code listener} once when the world fails (at once if it has). The returned handle
     * removes it: a guard that finished normally must not stay registered.
     */
    public AutoCloseable whenFailed(Consumer<WorldFailure> listener) {
        listeners.add(listener);
        WorldFailure f = failure;
        if (f != null && listeners.remove(listener)) {
            listener.accept(f);
        }
        return () -> listeners.remove(listener);
    }

    /**
     * {@code operation}, failing with {@link PeerLostException} as soon as the world fails, whatever
     * the operation's own deadline. The operation is then cancelled (a store wait is withdrawn from the
     * store), as it is when the caller cancels the returned Uni: nobody waits for it any more. An
     * operation that fails because its store connection dropped ({@link StoreConnectionLostException})
     * is reported so only after {@link #LOST_STORE_GRACE}, and as the world's failure if liveness reports
     * one meanwhile: a rank whose store host died is told which rank, not just that a connection dropped.
     */
    public <T> Uni<T> guard(Uni<T> operation, String what) {
        return guard(operation, what, false);
    }

    /**
     * As {@link #guard(Uni, String)}, but for an operation that only a lost store can hold up (it does
     * not wait for peers): cut short only when the failure includes the store.
     */
    public <T> Uni<T> guardAgainstLostStore(Uni<T> operation, String what) {
        return guard(operation, what, true);
    }

    private <T> Uni<T> guard(Uni<T> operation, String what, boolean onlyIfStoreLost) {
        WorldFailure now = failure;
        if (now != null && (!onlyIfStoreLost || now.storeLost())) {
            return Uni.createFrom().failure(now.abort(what));
        }
        return Uni.createFrom().emitter(emitter -> {
            AtomicBoolean ended = new AtomicBoolean();
            AtomicReference<AutoCloseable> registration = new AtomicReference<>();
            AtomicReference<Cancellable> running = new AtomicReference<>();
            // Ended by the operation, by the world failing or by the caller cancelling: in the last two
            // cases the operation is cancelled too (after it ended by itself that does nothing).
            emitter.onTermination(() -> {
                ended.set(true);
                close(registration.getAndSet(null));
                cancel(running.getAndSet(null));
            });
            registration.set(whenFailed(f -> {
                if (!onlyIfStoreLost || f.storeLost()) {
                    emitter.fail(f.abort(what));
                }
            }));
            if (ended.get()) {
                close(registration.getAndSet(null));
                return; // the world failed meanwhile: the operation is not even started
            }
            running.set(operation.subscribe().with(emitter::complete, error -> failAfterGrace(emitter, error)));
            if (ended.get()) {
                cancel(running.getAndSet(null)); // ended while subscribing
            }
        });
    }

    /**
     * Fails a guarded call with {@code error}; a dropped store connection only after the grace, unless the
     * world fails first: then the call's registration fails it with the world's failure, naming the rank
     * (a guard's emitter takes the first ending only).
     */
    private <T> void failAfterGrace(UniEmitter<? super T> emitter, Throwable error) {
        if (!(error instanceof StoreConnectionLostException) || failure != null || leaving || lostStoreGrace.isZero()) {
            emitter.fail(error);
            return;
        }
        Infrastructure.getDefaultWorkerPool().schedule(() -> emitter.fail(error), lostStoreGrace.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private static void cancel(Cancellable operation) {
        if (operation != null) {
            operation.cancel();
        }
    }

    int listenerCount() {
        return listeners.size();
    }

    private static void close(AutoCloseable registration) {
        if (registration == null) {
            return;
        }
        try {
            registration.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
