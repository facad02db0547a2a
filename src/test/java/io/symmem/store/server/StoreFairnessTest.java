package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static io.symmem.store.StoreTestSupport.startServer;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.wire.TcpStoreWire;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One connection with a long backlog does not keep the others waiting for all of it: the server applies
 * it in slices and serves the others in between. Shown by order, not by time: another client's answer
 * comes back while the backlog is still there.
 */
@Timeout(60)
class StoreFairnessTest extends VertxTest {

    private static final int WAIT = 6, PING = 13;
    private static final int BACKLOG = 500_000;

    @Test
    void anotherClientIsAnsweredWhileAPipelinedBacklogIsStillBeingApplied() throws Exception {
        StoreServer server = startServer(vertx);
        TcpStoreClient other = connectPipelined(vertx, server.port());
        try (RawConnection hog = new RawConnection(server.port()).validate()) {
            // The backlog: 500,000 PINGs held behind a WAIT, so that all of it is read before it may run.
            hog.send(string(frame(WAIT).putLong(1), "/gate"));
            ByteBuffer pings = ByteBuffer.allocate(BACKLOG * 5).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < BACKLOG; i++) {
                pings.put((byte) PING).putInt(i);
            }
            hog.sendBytes(pings.array());
            awaitHeld(server, hog, BACKLOG * 5L);

            // One write: the set releases the backlog, the ping is served in the same pass as its first slice.
            var setDone = other.set("gate", bytes("open")).subscribeAsCompletionStage();
            other.ping().await().atMost(AWAIT);
            setDone.join();

            assertThat(held(server, hog)).as("request bytes of the backlog still unapplied after the other's answer").isPositive();

            // The backlog itself is answered completely and in order.
            assertThat(hog.readByte()).isEqualTo(TcpStoreWire.WAIT_STOP_WAITING);
            for (int i = 0; i < BACKLOG; i++) {
                assertThat(hog.readInt()).isEqualTo(i);
            }
        } finally {
            other.close();
            server.close();
        }
    }

    private static long held(StoreServer server, RawConnection raw) {
        return server.connectionStats().await().atMost(AWAIT).stream()
                .filter(c -> c.remote().endsWith(":" + raw.localPort()))
                .mapToLong(StoreConnectionStats::requestBytesHeld).findFirst().orElse(-1);
    }

    private static void awaitHeld(StoreServer server, RawConnection raw, long bytes) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (held(server, raw) < bytes) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server never held the whole backlog: " + held(server, raw));
            }
            Thread.sleep(5);
        }
    }
}
