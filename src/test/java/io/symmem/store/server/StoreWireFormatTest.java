package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.awaitPendingWaits;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreServerTest;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Drives the server with hand-built TCPStore frames (query codes as in c10d: SET=1 … PING=13). */
@Timeout(20)
class StoreWireFormatTest extends StoreServerTest {

    private static final int SET = 1, GET = 3, ADD = 4, CHECK = 5, WAIT = 6, GETNUMKEYS = 7, DELETE_KEY = 8,
            CANCEL_WAIT = 12, PING = 13;

    @Test
    void everyImplementedFrameAnswersAsTcpStoreDoes() throws Exception {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.validate(); // no answer to VALIDATE
            raw.send(frame(PING).putInt(0x01020304));
            assertThat(raw.readInt()).isEqualTo(0x01020304);

            raw.send(string(string(frame(SET), "/k"), "value")); // SET: key, value; no answer
            raw.send(string(frame(GET), "/k"));
            assertThat(text(raw.readVector())).isEqualTo("value");

            raw.send(string(frame(ADD), "/n").putLong(41));
            assertThat(raw.readLong()).isEqualTo(41);
            raw.send(string(frame(ADD), "/n").putLong(1));
            assertThat(raw.readLong()).isEqualTo(42);
            raw.send(string(frame(GET), "/n"));
            assertThat(text(raw.readVector())).isEqualTo("42");

            raw.send(string(string(frame(CHECK).putLong(2), "/k"), "/n"));
            assertThat(raw.readByte()).isEqualTo(0); // READY
            raw.send(string(frame(CHECK).putLong(1), "/absent"));
            assertThat(raw.readByte()).isEqualTo(1); // NOT_READY

            raw.send(frame(GETNUMKEYS));
            assertThat(raw.readLong()).isEqualTo(2);

            raw.send(string(frame(DELETE_KEY), "/k"));
            assertThat(raw.readLong()).isEqualTo(1);
            raw.send(string(frame(DELETE_KEY), "/k"));
            assertThat(raw.readLong()).isEqualTo(0);

            raw.send(string(frame(WAIT).putLong(1), "/n"));
            assertThat(raw.readByte()).isEqualTo(0); // STOP_WAITING at once: key present
        }
    }

    @Test
    void waitIsAnsweredWhenAnotherClientSetsTheKey() throws Exception {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.validate();
            raw.send(string(frame(WAIT).putLong(1), "/later"));
            awaitPendingWaits(server, 1);
            assertThat(raw.silentFor(100)).isTrue();
            TcpStoreClient client = connect(vertx, server.port());
            client.set("later", bytes("x")).await().atMost(AWAIT); // the client adds the "/" prefix
            assertThat(raw.readByte()).isEqualTo(0);
            client.close();
        }
    }

    @Test
    void cancelWaitAnswersWaitCanceledAndDropsTheWait() throws Exception {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.validate();
            raw.send(string(frame(WAIT).putLong(1), "/never"));
            awaitPendingWaits(server, 1);
            raw.send(frame(CANCEL_WAIT));
            assertThat(raw.readByte()).isEqualTo(1); // WAIT_CANCELED
            assertThat(server.pendingWaitCount().await().atMost(AWAIT)).isZero();
            // Setting the key later sends nothing more on this connection.
            raw.send(string(string(frame(SET), "/never"), "v"));
            raw.send(frame(PING).putInt(7));
            assertThat(raw.readInt()).isEqualTo(7);
        }
    }

    @Test
    void framesSplitIntoSingleBytesAreReassembled() throws Exception {
        ByteBuffer set = string(string(frame(SET), "/split"), "0123456789");
        ByteBuffer get = string(frame(GET), "/split");
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.validate();
            byte[] all = new byte[set.position() + get.position()];
            System.arraycopy(set.array(), 0, all, 0, set.position());
            System.arraycopy(get.array(), 0, all, set.position(), get.position());
            for (byte b : all) {
                raw.sendBytes(new byte[] {b});
            }
            assertThat(text(raw.readVector())).isEqualTo("0123456789");
        }
    }

    @Test
    void disconnectDropsThePendingWaitsOfThatConnection() throws Exception {
        try (RawConnection raw = new RawConnection(server.port())) {
            raw.validate();
            raw.send(string(frame(WAIT).putLong(1), "/x"));
            awaitPendingWaits(server, 1);
        }
        awaitPendingWaits(server, 0);
    }
}
