package io.symmem.store.server;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.wire.StoreRequestArbitraries;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Whatever a peer sends, on a real server: random bytes or a valid stream with a few bytes broken,
 * with or without VALIDATE first. The peer may lose its connection; nobody else loses anything, and
 * once the peer is gone the server holds nothing of it (no connection, no pending wait).
 */
class StoreServerGarbagePropertiesTest {

    private static final StoreLimits LIMITS = new StoreLimits(64, 256 * 1024, 32);

    private static Vertx vertx;
    private static StoreServer server;
    private static TcpStoreClient good;

    @BeforeContainer
    static void start() {
        vertx = Vertx.vertx();
        server = StoreTestSupport.startServer(vertx, LIMITS);
        good = StoreTestSupport.connect(vertx, server.port());
        good.set("kept", bytes("kept")).await().atMost(AWAIT);
    }

    @AfterContainer
    static void stop() {
        good.close();
        server.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @Property(tries = 150)
    void garbageCostsOnlyItsOwnConnection(@ForAll("garbage") byte[] garbage, @ForAll boolean validateFirst) throws Exception {
        try (Socket peer = new Socket(StoreTestSupport.HOST, server.port())) {
            peer.setTcpNoDelay(true);
            try {
                OutputStream out = peer.getOutputStream();
                if (validateFirst) {
                    out.write(ByteBuffer.allocate(5).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0).putInt(0x3C85F7CE).array());
                }
                out.write(garbage);
                out.flush();
            } catch (IOException closedByTheServer) {
                // the server refused what came first and closed: what the property allows
            }
            // While the peer is still connected (maybe mid-frame, maybe waiting): others are served.
            assertGoodClientServed();
        }
        // Gone: nothing of it is left in the server.
        awaitOnlyTheGoodClientLeft();
        assertGoodClientServed();
    }

    private static void assertGoodClientServed() {
        assertThat(text(good.get("kept", AWAIT).await().atMost(AWAIT))).isEqualTo("kept");
        good.ping().await().atMost(AWAIT);
    }

    /** Polls (a bound that only stops hangs) until the peer's connection and its waits are gone. */
    private static void awaitOnlyTheGoodClientLeft() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        StoreStats stats = server.stats().await().atMost(AWAIT);
        while (stats.openConnections() != 1 || stats.pendingWaits() != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server still holds the peer's connection or waits: " + stats);
            }
            Thread.sleep(5);
            stats = server.stats().await().atMost(AWAIT);
        }
    }

    @Provide
    Arbitrary<byte[]> garbage() {
        return StoreRequestArbitraries.garbage(LIMITS);
    }
}
