package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Shared helpers: loopback only, short deadlines. */
public final class StoreTestSupport {

    public static final String HOST = "127.0.0.1";
    public static final Duration AWAIT = Duration.ofSeconds(5);

    private StoreTestSupport() {}

    public static StoreServer startServer(Vertx vertx) {
        StoreServer server = new StoreServer(vertx, HOST, 0);
        server.start().await().atMost(AWAIT);
        return server;
    }

    /**
     * A server on a port below Linux's ephemeral range (32768+), for tests that restart a server on
     * the same port: an ephemeral port may meanwhile be taken as some client's source port.
     */
    public static StoreServer startServerOnFixedPort(Vertx vertx) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            int port = java.util.concurrent.ThreadLocalRandom.current().nextInt(20000, 32000);
            StoreServer server = new StoreServer(vertx, HOST, port);
            try {
                server.start().await().atMost(AWAIT);
                return server;
            } catch (RuntimeException taken) {
                last = taken;
            }
        }
        throw last;
    }

    public static StoreServer startServer(Vertx vertx, StoreLimits limits) {
        StoreServer server = new StoreServer(vertx, HOST, 0, limits);
        server.start().await().atMost(AWAIT);
        return server;
    }

    public static TcpStoreClient connect(Vertx vertx, int port) {
        return TcpStoreClient.connect(vertx, HOST, port, Duration.ofSeconds(3)).await().atMost(AWAIT);
    }

    /** A client with WAIT+GET pipelining, as ranks and the benchmark use against our server. */
    public static TcpStoreClient connectPipelined(Vertx vertx, int port) {
        return TcpStoreClient.connect(vertx, HOST, port, Duration.ofSeconds(3), TcpStoreClient.Options.forSymmemServer())
                .await().atMost(AWAIT);
    }

    /** Polls the server until it holds {@code count} unanswered WAITs (a condition, not a fixed sleep). */
    public static void awaitPendingWaits(StoreServer server, int count) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (server.pendingWaitCount().await().atMost(AWAIT) != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("server never held " + count + " pending wait(s)");
            }
            Thread.onSpinWait();
        }
    }

    /**
     * A subscription whose outcome lands in {@code result}; {@link #cancel()} cancels it as a caller that
     * gives up does. (CompletableFuture.cancel of subscribeAsCompletionStage() does not reach the
     * subscription where SmallRye context propagation wraps the future, as in the service.)
     */
    public record Subscribed<T>(CompletableFuture<T> result, Cancellable subscription) {
        public void cancel() {
            subscription.cancel();
        }
    }

    public static <T> Subscribed<T> subscribe(Uni<T> operation) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Cancellable subscription = operation.subscribe().with(result::complete, result::completeExceptionally);
        return new Subscribed<>(result, subscription);
    }

    public static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    public static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
