package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreServerTest;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The frames of the newer operations, byte by byte as a PyTorch TCPStore client sends them (keys with
 * its "/" prefix), so that a key a Python rank writes as "foo" is the key our clients read as "foo".
 */
@Timeout(20)
class PyTorchKeyCompatibilityTest extends StoreServerTest {

    @Test
    void keysWrittenLikePyTorchAreReadByJavaClientsAndViceVersa() throws Exception {
        TcpStoreClient tcp = connect(vertx, server.port());
        LocalStore local = server.localStore();
        try (RawConnection python = new RawConnection(server.port())) {
            python.validate();
            // SET "/foo" = "bar" (type 1), as TCPStore.set("foo", "bar").
            python.send(frame(1).put(wire("/foo")).putLong(3).put(bytes("bar")));
            // MULTI_SET (11): int64 count, then key/value pairs.
            python.send(string(string(frame(11).putLong(1), "/ms"), "v"));
            // APPEND (9) and QUEUE_PUSH (14): key, value; no answer.
            python.send(string(string(frame(9), "/ms"), "w"));
            python.send(string(string(frame(14), "/q"), "job"));
            // PING (13) to know all of the above was applied.
            python.send(frame(13).putInt(42));
            assertThat(python.readInt()).isEqualTo(42);
            assertThat(text(tcp.get("foo", AWAIT).await().atMost(AWAIT))).isEqualTo("bar");
            assertThat(text(local.get("ms", AWAIT).await().atMost(AWAIT))).isEqualTo("vw");
            assertThat(tcp.queueLength("q").await().atMost(AWAIT)).isEqualTo(1);

            tcp.set("fromJava", bytes("j")).await().atMost(AWAIT);
            tcp.ping().await().atMost(AWAIT);
            // GET (3) "/fromJava".
            python.send(string(frame(3), "/fromJava"));
            assertThat(text(python.readVector())).isEqualTo("j");
            // COMPARE_SET (2): key, expected, desired -> value afterwards.
            python.send(string(string(string(frame(2), "/fromJava"), "j"), "k"));
            assertThat(text(python.readVector())).isEqualTo("k");
            // MULTI_GET (10): uint64 count, keys -> one vector per key.
            python.send(string(string(frame(10).putLong(2), "/foo"), "/fromJava"));
            assertThat(text(python.readVector())).isEqualTo("bar");
            assertThat(text(python.readVector())).isEqualTo("k");
            // QUEUE_LEN (16) -> int64; QUEUE_POP (15) -> int64 length before, then the value.
            python.send(string(frame(16), "/q"));
            assertThat(python.readLong()).isEqualTo(1);
            python.send(string(frame(15), "/q"));
            assertThat(python.readLong()).isEqualTo(1);
            assertThat(text(python.readVector())).isEqualTo("job");
            python.send(string(frame(15), "/q"));
            assertThat(python.readLong()).isZero();
            // LIST_KEYS (17) -> int64 count, then wire keys (with the prefix).
            python.send(frame(17));
            long count = python.readLong();
            List<String> listed = new java.util.ArrayList<>();
            for (long i = 0; i < count; i++) {
                listed.add(text(python.readVector()));
            }
            assertThat(listed).containsExactlyInAnyOrder("/foo", "/ms", "/fromJava");
            // GETNUMKEYS (7) counts values only.
            python.send(frame(7));
            assertThat(python.readLong()).isEqualTo(3);
        } finally {
            tcp.close();
        }
        assertThat(local.listKeys().await().atMost(AWAIT)).containsExactlyInAnyOrder("foo", "ms", "fromJava");
    }

    private static byte[] wire(String key) {
        byte[] k = bytes(key);
        return java.nio.ByteBuffer.allocate(8 + k.length).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(k.length).put(k).array();
    }
}
