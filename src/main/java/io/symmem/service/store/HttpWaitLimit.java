package io.symmem.service.store;

import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The waits this rank serves over HTTP (store long polls, {@code POST /v1/store/wait}, the groups'
 * collectives and bootstrap ids): bounded in number, and answered when the rank stops. On a rank that
 * reaches the store over TCP each wait holds a connection to the store while it runs, so HTTP callers
 * could otherwise open connections to rank 0 without end; more answer 503. When the rank is stopped
 * (SIGTERM, as Kubernetes stops a pod) every wait still open is answered 503 at once, before the rank
 * leaves its world and its HTTP server closes: a caller learns why, instead of seeing its connection cut.
 */
@ApplicationScoped
public class HttpWaitLimit {
    private static final Logger LOG = Logger.getLogger(HttpWaitLimit.class);

    public static final int MAX_WAITS = 128;

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicBoolean stopping = new AtomicBoolean();
    /** One per open wait: running it ends that wait with the 503. Removed when the wait ends, however it ends. */
    private final Set<Runnable> enders = ConcurrentHashMap.newKeySet();

    /** Runs {@code wait} if fewer than {@link #MAX_WAITS} run; counted until it ends, fails or its caller leaves. */
    public <T> Uni<T> run(int rank, Supplier<Uni<T>> wait) {
        if (stopping.get()) {
            throw stoppingAnswer(rank);
        }
        if (running.incrementAndGet() > MAX_WAITS) {
            running.decrementAndGet();
            throw new StoreHttpException(503, "rank " + rank + " already serves " + MAX_WAITS
                    + " store waits over HTTP (long polls and /v1/store/wait); try again when one has ended", null);
        }
        try {
            Uni<T> inner = wait.get();
            Uni<T> endable = Uni.createFrom().emitter(emitter -> {
                AtomicReference<Cancellable> waiting = new AtomicReference<>();
                Runnable ender = () -> emitter.fail(stoppingAnswer(rank));
                enders.add(ender);
                // Whichever way the wait ends (its answer, the rank stopping, the caller leaving), it stops
                // waiting in the store too.
                AtomicBoolean ended = new AtomicBoolean();
                emitter.onTermination(() -> {
                    ended.set(true);
                    enders.remove(ender);
                    Cancellable subscribed = waiting.get();
                    if (subscribed != null) {
                        subscribed.cancel();
                    }
                });
                waiting.set(inner.subscribe().with(emitter::complete, emitter::fail));
                if (ended.get()) {
                    waiting.get().cancel(); // ended while it subscribed: cancelling an ended wait does nothing
                }
                if (stopping.get()) {
                    ender.run();
                }
            });
            return endable.onTermination().invoke(running::decrementAndGet);
        } catch (RuntimeException e) {
            running.decrementAndGet();
            throw e;
        }
    }

    /**
     * Answers every open wait 503 and refuses new ones; returns how many were open. Quarkus closes its HTTP
     * server before it fires ShutdownEvent, so `serve` calls this from its SIGTERM handler first.
     */
    public int endAll() {
        if (!stopping.compareAndSet(false, true)) {
            return 0;
        }
        int open = running.get();
        List.copyOf(enders).forEach(Runnable::run);
        if (open > 0) {
            LOG.infof("stopping: %d wait(s) over HTTP answered 503", open);
        }
        return open;
    }

    /** For the other ways a rank stops; before the rank leaves its world (RankRuntime observes it later). */
    void onStop(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) ShutdownEvent event) {
        endAll();
    }

    private static StoreHttpException stoppingAnswer(int rank) {
        return new StoreHttpException(503, "rank " + rank + " is stopping (SIGTERM or the end of its command): "
                + "the wait ended without an answer; ask a rank that runs", null);
    }
}
