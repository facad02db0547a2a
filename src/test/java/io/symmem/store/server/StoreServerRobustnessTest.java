package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A bad peer loses its own connection; everyone else keeps working and keeps their data. */
@Timeout(20)
class StoreServerRobustnessTest extends VertxTest {

    private StoreServer server;
    private TcpStoreClient good;

    @BeforeEach
    void start() {
        server = startServer(vertx, new StoreLimits(64, 1024, 16));
        good = connect(vertx, server.port());
        good.set("before", bytes("kept")).await().atMost(AWAIT);
        // A round trip acknowledges the set: the server applied it.
        assertThat(good.check(List.of("before")).await().atMost(AWAIT)).isTrue();
    }

    @AfterEach
    void stop() {
        good.close();
        server.close();
    }

    private void assertGoodClientStillWorks() {
        good.set("after", bytes("fine")).await().atMost(AWAIT);
        assertThat(text(good.get("before", AWAIT).await().atMost(AWAIT))).isEqualTo("kept");
        assertThat(text(good.get("after", AWAIT).await().atMost(AWAIT))).isEqualTo("fine");
        assertThat(good.add("counter", 1).await().atMost(AWAIT)).isEqualTo(1L);
    }

    @Test
    void unknownQueryTypeClosesOnlyThatConnection() throws Exception {
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().sendBytes(new byte[] {(byte) 200, 1, 2, 3});
            assertThat(bad.closedByServer()).isTrue();
        }
        assertGoodClientStillWorks();
    }

    @Test
    void oversizedKeyClosesOnlyThatConnectionWithoutBufferingIt() throws Exception {
        try (RawConnection bad = new RawConnection(server.port())) {
            // Announces a 1 GiB key; the server must refuse on reading the length.
            bad.validate().send(frame(1).putLong(1L << 30));
            assertThat(bad.closedByServer()).isTrue();
        }
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().send(string(string(frame(1), "k".repeat(65)), "v"));
            assertThat(bad.closedByServer()).isTrue();
        }
        assertGoodClientStillWorks();
    }

    @Test
    void oversizedValueAndTooManyKeysCloseTheConnection() throws Exception {
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().send(string(frame(1), "/k").putLong(1025));
            assertThat(bad.closedByServer()).isTrue();
        }
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().send(frame(6).putLong(17)); // WAIT on 17 keys, limit 16
            assertThat(bad.closedByServer()).isTrue();
        }
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().send(frame(5).putLong(-1)); // CHECK with a "negative" (huge unsigned) count
            assertThat(bad.closedByServer()).isTrue();
        }
        assertGoodClientStillWorks();
    }

    @Test
    void aConnectionThatDoesNotValidateFirstIsClosed() throws Exception {
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.send(string(string(frame(1), "/sneaky"), "v"));
            assertThat(bad.closedByServer()).isTrue();
        }
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.send(frame(0).putInt(0x12345678)); // wrong magic
            assertThat(bad.closedByServer()).isTrue();
        }
        assertThat(good.check(List.of("sneaky")).await().atMost(AWAIT)).isFalse();
        assertGoodClientStillWorks();
    }

    @Test
    void addOnANonNumericValueClosesTheOffendingConnectionOnly() {
        TcpStoreClient careless = connect(vertx, server.port());
        try {
            careless.set("text", bytes("not a number")).await().atMost(AWAIT);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> careless.add("text", 1).await().atMost(AWAIT))
                    .isInstanceOf(StoreException.class)
                    .hasMessageContaining("lost");
        } finally {
            careless.close();
        }
        assertGoodClientStillWorks();
    }

    @Test
    void aWaiterOnAnotherConnectionIsNotDisturbedByABadPeer() throws Exception {
        var pending = good.get("released", AWAIT).subscribeAsCompletionStage();
        try (RawConnection bad = new RawConnection(server.port())) {
            bad.validate().sendBytes(new byte[] {(byte) 99});
            assertThat(bad.closedByServer()).isTrue();
        }
        TcpStoreClient other = connect(vertx, server.port());
        other.set("released", bytes("yes")).await().atMost(AWAIT);
        assertThat(text(pending.join())).isEqualTo("yes");
        other.close();
    }
}
