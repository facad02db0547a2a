package io.symmem.store.client;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.awaitPendingWaits;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static io.symmem.store.StoreTestSupport.subscribe;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.StoreServerTest;
import io.symmem.store.StoreTestSupport.Subscribed;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.server.LocalStore;
import io.symmem.store.server.StoreServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A caller that gives up (cancels the Uni) leaves nothing behind: its wait is withdrawn from the
 * server, and a request not sent yet is never sent, so it cannot be applied after the caller was told
 * it failed.
 */
@Timeout(30)
class StoreCancellationTest extends StoreServerTest {
    private static final Duration LONG = Duration.ofMinutes(5);

    @Test
    void aCancelledGetOverTcpIsWithdrawnAndTheConnectionServesTheNextRequestAtOnce() throws Exception {
        for (TcpStoreClient client : List.of(connect(vertx, server.port()), connectPipelined(vertx, server.port()))) {
            try {
                Subscribed<byte[]> abandoned = subscribe(client.get("never", LONG));
                awaitPendingWaits(server, 1);
                abandoned.cancel();
                awaitPendingWaits(server, 0);
                // With the WAIT still pending, these would be held until "never" appears (LONG).
                assertThat(client.add("n", 1).await().atMost(AWAIT)).isPositive();
                client.set("k", bytes("v")).await().atMost(AWAIT);
                assertThat(text(client.get("k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
                // A later wait on the same connection still works.
                Subscribed<byte[]> next = subscribe(client.get("later", LONG));
                server.localStore().set("later", bytes("here")).await().atMost(AWAIT);
                assertThat(text(next.result().get(5, TimeUnit.SECONDS))).isEqualTo("here");
            } finally {
                client.close();
            }
        }
    }

    @Test
    void aCancelledAwaitAndMultiGetAreWithdrawnToo() {
        TcpStoreClient client = connectPipelined(vertx, server.port());
        try {
            Subscribed<Void> awaiting = subscribe(client.await(List.of("x", "y"), LONG));
            awaitPendingWaits(server, 1);
            awaiting.cancel();
            awaitPendingWaits(server, 0);
            Subscribed<List<byte[]>> many = subscribe(client.multiGet(List.of("x", "y"), LONG));
            awaitPendingWaits(server, 1);
            many.cancel();
            awaitPendingWaits(server, 0);
            client.ping().await().atMost(AWAIT);
        } finally {
            client.close();
        }
    }

    @Test
    void aRequestHeldBehindAWaitAndCancelledIsNeverSent() throws Exception {
        // The default (PyTorch-safe) client holds answered requests behind its outstanding WAIT.
        TcpStoreClient client = connect(vertx, server.port());
        try {
            Subscribed<byte[]> gate = subscribe(client.get("gate", LONG));
            awaitPendingWaits(server, 1);
            Subscribed<Long> gaveUp = subscribe(client.add("counter", 1));
            gaveUp.cancel();
            server.localStore().set("gate", bytes("open")).await().atMost(AWAIT);
            assertThat(text(gate.result().get(5, TimeUnit.SECONDS))).isEqualTo("open");
            client.ping().await().atMost(AWAIT); // everything queued before it has gone out and been applied
            assertThat(server.localStore().check(List.of("counter")).await().atMost(AWAIT)).isFalse();
        } finally {
            client.close();
        }
    }

    @Test
    void aRequestMadeWhileReconnectingAndCancelledIsNeverSent() {
        StoreServer first = StoreTestSupport.startServerOnFixedPort(vertx);
        int port = first.port();
        TcpStoreClient client = TcpStoreClient.connect(vertx, HOST, port, Duration.ofSeconds(10),
                TcpStoreClient.Options.forSymmemServer()).await().atMost(AWAIT);
        try {
            client.ping().await().atMost(AWAIT);
            first.close();
            Subscribed<Long> gaveUp = subscribe(client.add("counter", 1));
            Subscribed<Void> setGaveUp = subscribe(client.set("written", bytes("x")));
            gaveUp.cancel();
            setGaveUp.cancel();
            StoreServer second = new StoreServer(vertx, HOST, port);
            second.start().await().atMost(AWAIT);
            try {
                client.ping().await().atMost(AWAIT); // reconnected, and the held queue has gone out
                assertThat(second.localStore().check(List.of("counter")).await().atMost(AWAIT)).isFalse();
                assertThat(second.localStore().check(List.of("written")).await().atMost(AWAIT)).isFalse();
            } finally {
                second.close();
            }
        } finally {
            client.close();
        }
    }

    @Test
    void aCancelledLocalWaitIsDroppedFromTheServer() {
        LocalStore local = server.localStore();
        Subscribed<byte[]> abandoned = subscribe(local.get("never", LONG));
        Subscribed<Void> awaiting = subscribe(local.await(List.of("a", "b"), LONG));
        awaitPendingWaits(server, 2);
        abandoned.cancel();
        awaiting.cancel();
        awaitPendingWaits(server, 0);
    }

    @Test
    void aCancelledLocalPopTakesNoValue() {
        LocalStore local = server.localStore();
        Subscribed<byte[]> abandoned = subscribe(local.queuePop("q", LONG));
        awaitPendingWaits(server, 1);
        abandoned.cancel();
        awaitPendingWaits(server, 0);
        local.queuePush("q", bytes("kept")).await().atMost(AWAIT);
        assertThat(local.queueLength("q").await().atMost(AWAIT)).isEqualTo(1);
    }
}
