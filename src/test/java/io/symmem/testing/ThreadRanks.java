package io.symmem.testing;

import io.symmem.store.StoreLimits;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Ranks as threads of one test JVM: a store server on loopback, a thread per rank, and a store
 * client per rank on request. Closing it checks that every rank thread ended.
 */
public final class ThreadRanks implements AutoCloseable {
    private final Duration timeout;
    private final Vertx vertx = Vertx.vertx();
    private final StoreServer server;
    private final ExecutorService threads;

    public ThreadRanks(int maxRanks, Duration timeout) {
        this.timeout = timeout;
        this.server = new StoreServer(vertx, StoreLimits.defaults());
        server.listen("127.0.0.1", 0).await().atMost(timeout);
        this.threads = Executors.newFixedThreadPool(maxRanks);
    }

    /** A new client of the store, for one rank. */
    public TcpStoreClient client() {
        return TcpStoreClient.connect(vertx, "127.0.0.1", server.port(), timeout).await().atMost(timeout);
    }

    /** Runs {@code body} on ranks 0..count-1, each on its own thread; each future holds that rank's result or failure. */
    public <T> List<Future<T>> run(int count, IntFunction<Callable<T>> body) {
        List<Future<T>> results = new ArrayList<>();
        for (int r = 0; r < count; r++) {
            results.add(threads.submit(body.apply(r)));
        }
        return results;
    }

    @Override
    public void close() throws InterruptedException {
        threads.shutdownNow();
        boolean ended = threads.awaitTermination(20, TimeUnit.SECONDS);
        server.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
        if (!ended) {
            throw new AssertionError("rank threads still running 20 s after the test");
        }
    }
}
