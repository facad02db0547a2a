package io.symmem.store.client;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.RawConnection;
import io.symmem.store.StoreException;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Connection loss: in-flight requests fail naming the store, later ones use a new connection; nothing hangs or is lost. */
@Timeout(30)
class StoreReconnectTest extends VertxTest {

    @Test
    void clientReconnectsAfterAServerRestartOnTheSamePort() {
        StoreServer first = StoreTestSupport.startServerOnFixedPort(vertx);
        int port = first.port();
        TcpStoreClient client = TcpStoreClient.connect(vertx, HOST, port, Duration.ofSeconds(10)).await().atMost(AWAIT);
        try {
            client.set("before", bytes("1")).await().atMost(AWAIT);
            CompletableFuture<byte[]> waiting = client.get("never", Duration.ofSeconds(20)).subscribeAsCompletionStage();
            StoreTestSupport.awaitPendingWaits(first, 1);
            first.close();
            // The in-flight wait learns of the loss at once, with the store named.
            assertThatThrownBy(() -> Uni.createFrom().completionStage(waiting).await().atMost(AWAIT))
                    .isInstanceOf(StoreException.class)
                    .hasMessage("connection to store " + HOST + ":" + port + " lost");
            // A request made while the server is down is held and goes out on the new connection.
            CompletableFuture<Long> held = client.add("counter", 5).subscribeAsCompletionStage();
            StoreServer second = new StoreServer(vertx, HOST, port);
            second.start().await().atMost(AWAIT);
            try {
                assertThat(Uni.createFrom().completionStage(held).await().atMost(AWAIT)).isEqualTo(5);
                client.set("after", bytes("2")).await().atMost(AWAIT);
                assertThat(text(client.get("after", AWAIT).await().atMost(AWAIT))).isEqualTo("2");
                assertThat(client.reconnectCount()).isEqualTo(1);
                // The new server starts empty: data lives in rank 0's memory only.
                assertThat(client.check(List.of("before")).await().atMost(AWAIT)).isFalse();
            } finally {
                second.close();
            }
        } finally {
            client.close();
        }
    }

    @Test
    void clientGivesUpAfterItsConnectTimeoutAndFailsLaterRequests() {
        StoreServer server = startServer(vertx);
        TcpStoreClient client = TcpStoreClient.connect(vertx, HOST, server.port(), Duration.ofMillis(500)).await().atMost(AWAIT);
        server.close();
        assertThatThrownBy(() -> client.add("x", 1).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining(HOST + ":" + server.port());
        assertThatThrownBy(() -> client.ping().await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("not re-established");
        client.close();
    }

    @Test
    void aClientDisconnectingMidFrameDisturbsNoOtherAndNoAcknowledgedWriteIsLost() throws Exception {
        StoreServer server = startServer(vertx);
        List<TcpStoreClient> writers = new ArrayList<>();
        try {
            for (int c = 0; c < 3; c++) {
                writers.add(connect(vertx, server.port()));
            }
            List<Uni<Void>> writes = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                TcpStoreClient writer = writers.get(i % writers.size());
                writes.add(writer.set("w/" + i, bytes(Integer.toString(i))));
                if (i == 100) {
                    // Half a SET frame (announces a 1000-byte value, sends 3), then gone.
                    try (RawConnection raw = new RawConnection(server.port())) {
                        raw.validate().send(RawConnection.string(RawConnection.frame(1), "/w/torn").putLong(1000).put(new byte[3]));
                    }
                }
            }
            Uni.join().all(writes).andFailFast().await().atMost(AWAIT);
            // Each writer's PING is answered after its earlier SETs were applied (one connection is served in order).
            for (TcpStoreClient writer : writers) {
                writer.ping().await().atMost(AWAIT);
            }
            TcpStoreClient reader = connect(vertx, server.port());
            writers.add(reader);
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                keys.add("w/" + i);
            }
            List<byte[]> values = reader.multiGet(keys, AWAIT).await().atMost(AWAIT);
            for (int i = 0; i < 200; i++) {
                assertThat(text(values.get(i))).isEqualTo(Integer.toString(i));
            }
            assertThat(reader.check(List.of("w/torn")).await().atMost(AWAIT)).isFalse();
        } finally {
            writers.forEach(TcpStoreClient::close);
            server.close();
        }
    }
}
