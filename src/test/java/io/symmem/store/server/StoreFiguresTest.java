package io.symmem.store.server;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.connect;
import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.mutiny.Uni;
import io.symmem.store.StoreServerTest;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import java.time.Duration;
import java.util.List;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * The figures metrics publish, read on the test's thread (not the server's loop): each is already
 * exact once the request that changed it has been answered, with no copy to wait for.
 */
class StoreFiguresTest extends StoreServerTest {

    @Test
    void aRequestIsCountedByTheTimeItsAnswerArrives() {
        StoreFigures figures = server.figures();
        assertThat(figures.keys()).isZero();
        assertThat(figures.connectionsAccepted()).isZero();
        LocalStore local = server.localStore();
        local.set("a", new byte[] {1}).await().atMost(AWAIT);
        assertThat(figures.keys()).isEqualTo(1);
        assertThat(figures.served("SET")).isEqualTo(1);
        local.set("a", new byte[] {2}).await().atMost(AWAIT);
        local.add("b", 5).await().atMost(AWAIT);
        assertThat(figures.keys()).isEqualTo(2);
        assertThat(figures.served("SET")).isEqualTo(2);
        assertThat(figures.served("ADD")).isEqualTo(1);
        assertThat(local.delete("a").await().atMost(AWAIT)).isTrue();
        assertThat(figures.keys()).isEqualTo(1);

        try (TcpStoreClient client = connect(vertx, server.port())) {
            long pings = figures.served("PING"); // the client may ping while it connects
            client.ping().await().atMost(AWAIT); // answered, so the server has accepted and served it
            assertThat(figures.connectionsAccepted()).isEqualTo(1);
            assertThat(figures.openConnections()).isEqualTo(1);
            assertThat(figures.served("PING")).isEqualTo(pings + 1);
            assertThat(client.numKeys().await().atMost(AWAIT)).isEqualTo(figures.keys());
        }
        awaitFigure(figures::openConnections, 0); // the server sees the close a moment later
        assertThat(figures.connectionsAccepted()).isEqualTo(1);
    }

    @Test
    void pendingWaitsFollowRegistrationReleaseAndCancellation() {
        StoreFigures figures = server.figures();
        LocalStore local = server.localStore();
        Uni<Void> waiting = local.await(List.of("x", "y"), Duration.ofSeconds(10)).memoize().indefinitely();
        waiting.subscribe().with(ok -> { }, e -> { });
        awaitFigure(figures::pendingWaits, 1);
        try (TcpStoreClient client = connect(vertx, server.port())) {
            client.await(List.of("z"), Duration.ofSeconds(10)).subscribe().with(ok -> { }, e -> { });
            awaitFigure(figures::pendingWaits, 2);
        }
        awaitFigure(figures::pendingWaits, 1); // the connection's wait went with it
        local.set("x", new byte[0]).await().atMost(AWAIT);
        assertThat(figures.pendingWaits()).isEqualTo(1); // still waiting for y
        local.set("y", new byte[0]).await().atMost(AWAIT);
        waiting.await().atMost(AWAIT);
        assertThat(figures.pendingWaits()).isZero();
    }

    @Test
    void stoppingTheServerClosesItsConnectionsInTheFigures() {
        TcpStoreClient client = connect(vertx, server.port());
        client.ping().await().atMost(AWAIT);
        assertThat(server.figures().openConnections()).isEqualTo(1);
        server.close();
        assertThat(server.figures().openConnections()).isZero();
        client.close();
    }

    /** Polls for a change the server makes on its own (a closed socket), with a deadline. */
    private static void awaitFigure(IntSupplier figure, int expected) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (figure.getAsInt() != expected) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("figure stayed at " + figure.getAsInt() + ", expected " + expected);
            }
            Thread.onSpinWait();
        }
    }
}
