package io.symmem.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.LocalStore;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The store's meters read the server's live figures at each scrape: a change is visible in the very
 * next read, with no copy to wait for.
 */
class StoreMetricsTest {
    private static final Duration AWAIT = Duration.ofSeconds(10);

    @Test
    void metersShowAChangeAtOnce() {
        Vertx vertx = Vertx.vertx();
        StoreServer server = StoreTestSupport.startServer(vertx);
        try {
            MeterRegistry registry = new SimpleMeterRegistry();
            StoreMetrics metrics = new StoreMetrics();
            metrics.registry = registry;
            metrics.watch(server);
            LocalStore local = server.localStore();
            assertThat(gauge(registry, "symmem.store.keys")).isZero();

            local.set("a", new byte[] {1}).await().atMost(AWAIT);
            assertThat(gauge(registry, "symmem.store.keys")).isEqualTo(1);
            assertThat(requests(registry, "set")).isEqualTo(1);
            local.add("b", 2).await().atMost(AWAIT);
            assertThat(gauge(registry, "symmem.store.keys")).isEqualTo(2);
            assertThat(requests(registry, "add")).isEqualTo(1);

            try (TcpStoreClient client = TcpStoreClient.connect(vertx, "127.0.0.1", server.port(), AWAIT)
                    .await().atMost(AWAIT)) {
                client.ping().await().atMost(AWAIT);
                assertThat(gauge(registry, "symmem.store.connections.open")).isEqualTo(1);
                assertThat(registry.get("symmem.store.connections.accepted").functionCounter().count()).isEqualTo(1);
                assertThat(client.delete("a").await().atMost(AWAIT)).isTrue();
                assertThat(gauge(registry, "symmem.store.keys")).isEqualTo(1);
                assertThat(requests(registry, "delete_key")).isEqualTo(1);
            }
            local.await(List.of("never"), Duration.ofSeconds(30)).subscribe().with(ok -> { }, e -> { });
            long deadline = System.nanoTime() + AWAIT.toNanos();
            while (gauge(registry, "symmem.store.waits.pending") != 1 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the wait registers on the server's loop, a moment after the call
            }
            assertThat(gauge(registry, "symmem.store.waits.pending")).isEqualTo(1);
        } finally {
            server.close();
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    private static double gauge(MeterRegistry registry, String name) {
        return registry.get(name).gauge().value();
    }

    private static double requests(MeterRegistry registry, String op) {
        return registry.get("symmem.store.requests").tag("op", op).functionCounter().count();
    }
}
