package io.symmem.service.store;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Bounds the store waits (long polls, {@code POST /v1/store/wait}) the HTTP face of a rank serves at
 * once. On a rank that reaches the store over TCP each wait holds a connection to the store while it
 * runs, so HTTP callers could otherwise open connections to rank 0 without end; more answer 503.
 */
@ApplicationScoped
public class HttpWaitLimit {

    public static final int MAX_WAITS = 128;

    private final AtomicInteger running = new AtomicInteger();

    /** Runs {@code wait} if fewer than {@link #MAX_WAITS} run; counted until it ends, fails or its caller leaves. */
    public <T> Uni<T> run(int rank, Supplier<Uni<T>> wait) {
        if (running.incrementAndGet() > MAX_WAITS) {
            running.decrementAndGet();
            throw new StoreHttpException(503, "rank " + rank + " already serves " + MAX_WAITS
                    + " store waits over HTTP (long polls and /v1/store/wait); try again when one has ended", null);
        }
        try {
            return wait.get().onTermination().invoke(running::decrementAndGet);
        } catch (RuntimeException e) {
            running.decrementAndGet();
            throw e;
        }
    }
}
