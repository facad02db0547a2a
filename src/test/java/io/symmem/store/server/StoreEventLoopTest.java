package io.symmem.store.server;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.SelectStrategy;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.VertxTest;
import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The store server's own event loop: its thread, its lifecycle, and its poll-then-sleep strategy. */
class StoreEventLoopTest extends VertxTest {

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    @Test
    void strategyBlocksWhenIdleAndPollsForItsWindowAfterActivity() throws Exception {
        SpinThenSelectStrategy strategy = new SpinThenSelectStrategy(TimeUnit.SECONDS.toNanos(30));
        int[] ready = {0};
        // Nothing has happened yet: sleep in select.
        assertThat(strategy.calculateStrategy(() -> ready[0], false)).isEqualTo(SelectStrategy.SELECT);
        // The select returned (something woke the loop): now poll instead of sleeping.
        assertThat(strategy.calculateStrategy(() -> ready[0], false)).isEqualTo(SelectStrategy.CONTINUE);
        ready[0] = 3;
        assertThat(strategy.calculateStrategy(() -> ready[0], false)).isEqualTo(3);
        // Queued tasks: Netty's default (look without blocking, then run them).
        ready[0] = 0;
        assertThat(strategy.calculateStrategy(() -> ready[0], true)).isZero();
    }

    @Test
    void strategyWithoutAWindowAlwaysSleepsAndAfterTheWindowSleepsAgain() throws Exception {
        SpinThenSelectStrategy never = new SpinThenSelectStrategy(0);
        for (int i = 0; i < 3; i++) {
            assertThat(never.calculateStrategy(() -> 0, false)).isEqualTo(SelectStrategy.SELECT);
        }
        SpinThenSelectStrategy shortWindow = new SpinThenSelectStrategy(TimeUnit.MILLISECONDS.toNanos(1));
        assertThat(shortWindow.calculateStrategy(() -> 1, false)).isEqualTo(1);
        long start = System.nanoTime();
        int strategy;
        do {
            strategy = shortWindow.calculateStrategy(() -> 0, false);
        } while (strategy == SelectStrategy.CONTINUE && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        assertThat(strategy).as("polling ends once the window has passed").isEqualTo(SelectStrategy.SELECT);
        assertThatThrownBy(() -> new SpinThenSelectStrategy(-1)).hasMessageContaining("spinNanos must be >= 0");
    }

    @Test
    void aPollingServerServesClientsRunsTimersAndEndsItsThreadOnStop() throws Exception {
        StoreServer server = new StoreServer(vertx, HOST, 0, StoreLimits.defaults(), POLL_NANOS);
        server.start().await().atMost(AWAIT);
        assertThat(server.loopDescription()).isEqualTo("nio loop, polls 2000 µs after activity");
        Thread loop = server.loopThread().await().atMost(AWAIT);
        assertThat(loop.getName()).startsWith("symmem-store-server-");
        assertThat(loop.isDaemon()).isTrue();

        try (BlockingStoreClient client = BlockingStoreClient.connect(HOST, server.port(), Duration.ofSeconds(3),
                TcpStoreClient.Options.forSymmemServer())) {
            for (int i = 0; i < 200; i++) {
                client.set("k" + i, bytes("v" + i)).await().atMost(AWAIT);
                assertThat(text(client.get("k" + i, AWAIT).await().atMost(AWAIT))).isEqualTo("v" + i);
            }
        }
        // A timer on the polling loop still fires: a local wait for a missing key times out naming it.
        LocalStore local = server.localStore();
        assertThatThrownBy(() -> local.await(List.of("never-set"), Duration.ofMillis(100)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class).hasMessageContaining("never-set");

        server.close();
        loop.join(TimeUnit.SECONDS.toMillis(5));
        assertThat(loop.isAlive()).as("the store's loop thread ends with the server").isFalse();
        server.close(); // a second stop is harmless
        assertThatThrownBy(() -> server.stats().await().atMost(AWAIT)).hasMessageContaining("was stopped");
        assertThatThrownBy(() -> local.get("k1", AWAIT).await().atMost(AWAIT)).hasMessageContaining("was stopped");
    }

    @Test
    void onVertxWithTheEpollTransportTheStoreLoopIsEpollToo() {
        Vertx epollVertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        try {
            assertThat(epollVertx.isNativeTransportEnabled())
                    .as("Netty's epoll library loads here (Linux x86_64/aarch64): %s", epollVertx.unavailableNativeTransportCause())
                    .isTrue();
            StoreServer server = new StoreServer(epollVertx, HOST, 0, StoreLimits.defaults(), POLL_NANOS);
            server.start().await().atMost(AWAIT);
            assertThat(server.loopDescription()).startsWith("epoll loop");
            try (BlockingStoreClient client = BlockingStoreClient.connect(HOST, server.port(), Duration.ofSeconds(3),
                    TcpStoreClient.Options.forSymmemServer())) {
                client.set("k", bytes("v")).await().atMost(AWAIT);
                assertThat(text(client.get("k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
                assertThat(client.add("n", 5).await().atMost(AWAIT)).isEqualTo(5);
            } finally {
                server.close();
            }
        } finally {
            epollVertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    @Test
    void aLocalWaitPendingWhenTheServerStopsFailsInsteadOfHanging() {
        StoreServer server = new StoreServer(vertx, HOST, 0, StoreLimits.defaults(), POLL_NANOS);
        server.start().await().atMost(AWAIT);
        LocalStore local = server.localStore();
        var pending = local.get("late-key", Duration.ofMinutes(5)).subscribeAsCompletionStage();
        server.close();
        assertThatThrownBy(() -> pending.toCompletableFuture().get(5, TimeUnit.SECONDS))
                .hasMessageContaining("was stopped");
    }
}
