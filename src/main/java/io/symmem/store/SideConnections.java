package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.symmem.store.client.TcpStoreClient;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Connections beside the shared one, for the store requests of a process (reaching the store over TCP)
 * that could hold up or break a connection: waits and ADDs (see {@link SideConnectionStore}).
 *
 * <p>TCPStore's protocol answers a WAIT only once its keys exist, and a connection's other answered
 * requests cannot pass it (our server holds them behind it; against PyTorch's the client must). A wait
 * on a shared connection would hold up every request of the process for as long as it lasts, so each
 * such request borrows a connection here for as long as it runs: when it ends (answered, timed out,
 * failed or cancelled: a cancelled wait is withdrawn with CANCEL_WAIT first) the connection is kept for
 * the next one, up to {@link #KEEP_IDLE} idle ones, or closed. A connection whose request failed for
 * another reason than its deadline (lost, closed by the server) is closed rather than kept.
 */
public final class SideConnections implements AutoCloseable {

    /** Idle connections kept for the next requests; a burst beyond them connects anew. */
    static final int KEEP_IDLE = 4;

    private final Supplier<Uni<TcpStoreClient>> connect;
    private final ArrayDeque<TcpStoreClient> idle = new ArrayDeque<>();
    /** Every connection made and not closed yet, idle or borrowed: closed with the pool. */
    private final Set<TcpStoreClient> open = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean closed;

    /** @param connect makes a new connection to the store (with the options and limits of the shared one) */
    public SideConnections(Supplier<Uni<TcpStoreClient>> connect) {
        this.connect = connect;
    }

    /**
     * Runs {@code wait} (a wait, or any request) on a connection of its own. Like every store operation it
     * starts now; the Uni reports its outcome, and cancelling it withdraws the request (a wait with
     * CANCEL_WAIT) and gives the connection back.
     */
    public <T> Uni<T> run(Function<Store, Uni<T>> wait) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Cancellable running = Uni.createFrom().<T>emitter(emitter -> new Borrowed<>(emitter, wait).start())
                .subscribe().with(result::complete, result::completeExceptionally);
        result.whenComplete((ignored, error) -> {
            if (result.isCancelled()) {
                running.cancel();
            }
        });
        return Uni.createFrom().completionStage(result);
    }

    /** Connections open now (idle and borrowed), for tests and diagnostics. */
    public synchronized int openCount() {
        return open.size();
    }

    /** Closes every connection; waits still running fail with "closed", later ones at once. */
    @Override
    public void close() {
        List<TcpStoreClient> all;
        synchronized (this) {
            closed = true;
            all = List.copyOf(open);
            open.clear();
            idle.clear();
        }
        all.forEach(TcpStoreClient::close);
    }

    private synchronized TcpStoreClient takeIdle() {
        return idle.pollFirst();
    }

    /** Counts a new connection in; false (and closes it) if the pool was closed meanwhile. */
    private boolean adopt(TcpStoreClient connection) {
        synchronized (this) {
            if (!closed) {
                open.add(connection);
                return true;
            }
        }
        connection.close();
        return false;
    }

    private void giveBack(TcpStoreClient connection, boolean reusable) {
        synchronized (this) {
            if (reusable && !closed && idle.size() < KEEP_IDLE && open.contains(connection)) {
                idle.addFirst(connection); // the most recently used first: the others may age out
                return;
            }
            open.remove(connection);
        }
        connection.close();
    }

    private StoreException poolClosed() {
        return new StoreException("store side connections were closed");
    }

    /** One request from borrowing a connection to giving it back. */
    private final class Borrowed<T> {
        private final UniEmitter<? super T> emitter;
        private final Function<Store, Uni<T>> wait;
        private TcpStoreClient connection;
        private Cancellable running;
        private boolean ended;
        private boolean reusable = true;

        Borrowed(UniEmitter<? super T> emitter, Function<Store, Uni<T>> wait) {
            this.emitter = emitter;
            this.wait = wait;
        }

        void start() {
            emitter.onTermination(this::end);
            TcpStoreClient ready = takeIdle();
            if (ready != null) {
                use(ready);
                return;
            }
            synchronized (SideConnections.this) {
                if (closed) {
                    emitter.fail(poolClosed());
                    return;
                }
            }
            connect.get().subscribe().with(made -> {
                if (adopt(made)) {
                    use(made);
                } else {
                    emitter.fail(poolClosed());
                }
            }, emitter::fail);
        }

        private void use(TcpStoreClient candidate) {
            synchronized (this) {
                if (ended) {
                    giveBack(candidate, true); // the caller left while the connection was being made
                    return;
                }
                connection = candidate;
            }
            Cancellable started = wait.apply(candidate).subscribe().with(emitter::complete, failure -> {
                synchronized (this) {
                    // Lost or closed: do not hand this connection to the next wait.
                    reusable = !(failure instanceof StoreException) || failure instanceof StoreTimeoutException;
                }
                emitter.fail(failure);
            });
            synchronized (this) {
                running = started;
            }
            if (isEnded()) {
                started.cancel(); // ended while subscribing; end() may have missed it
            }
        }

        private synchronized boolean isEnded() {
            return ended;
        }

        /** Answered, failed, or cancelled by the caller: cancel what runs (a no-op after it ended) and give back. */
        private void end() {
            TcpStoreClient borrowed;
            Cancellable toCancel;
            boolean keep;
            synchronized (this) {
                ended = true;
                borrowed = connection;
                toCancel = running;
                keep = reusable;
                connection = null;
            }
            if (toCancel != null) {
                toCancel.cancel(); // the client withdraws the wait before it serves the next one
            }
            if (borrowed != null) {
                giveBack(borrowed, keep);
            }
        }
    }
}
