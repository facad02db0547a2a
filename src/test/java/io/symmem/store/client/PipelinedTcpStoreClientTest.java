package io.symmem.store.client;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.awaitPendingWaits;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.server.StoreStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Every {@link TcpStoreClientTest} again with WAIT+GET pipelining (as ranks and the benchmark use it
 * against our server), plus the server's in-order rule it relies on, checked with raw frames.
 */
class PipelinedTcpStoreClientTest extends TcpStoreClientTest {

    private static final int SET = 1, GET = 3, ADD = 4, WAIT = 6, CANCEL_WAIT = 12, PING = 13;

    @Override
    TcpStoreClient connectClient(int port) {
        TcpStoreClient client = connectPipelined(vertx, port);
        assertThat(client.pipelinesWaits()).isTrue();
        return client;
    }

    @Test
    void serverHoldsAnsweredRequestsBehindAPendingWaitButAppliesSetsAtOnce() throws Exception {
        try (RawConnection raw = new RawConnection(server.port()).validate();
                RawConnection other = new RawConnection(server.port()).validate()) {
            // WAIT, GET, ADD, PING in one write: nothing may be answered before the WAIT.
            java.nio.ByteBuffer batch = frame(WAIT).putLong(1);
            string(batch, "/gate");
            batch.put((byte) GET);
            string(batch, "/gate");
            batch.put((byte) ADD);
            string(batch, "/n").putLong(7);
            batch.put((byte) PING).putInt(99);
            raw.send(batch);
            awaitPendingWaits(server, 1);
            assertThat(raw.silentFor(200)).isTrue();
            // A SET behind the pending WAIT is applied at once: another connection's wait for it ends
            // (were it held behind the WAIT, that wait would outlast the socket's 3 s read timeout). A
            // plain GET would race the SET: the kernel does not order two sockets' data.
            raw.send(string(string(frame(SET), "/side"), "s"));
            java.nio.ByteBuffer waitThenGet = frame(WAIT).putLong(1);
            string(waitThenGet, "/side");
            waitThenGet.put((byte) GET);
            string(waitThenGet, "/side");
            other.send(waitThenGet);
            assertThat(other.readByte()).isEqualTo(0); // STOP_WAITING
            assertThat(text(other.readVector())).isEqualTo("s");
            other.send(string(string(frame(SET), "/gate"), "open"));
            assertThat(raw.readByte()).isEqualTo(0); // STOP_WAITING
            assertThat(text(raw.readVector())).isEqualTo("open");
            assertThat(raw.readLong()).isEqualTo(7);
            assertThat(raw.readInt()).isEqualTo(99);
        }
    }

    @Test
    void cancelWaitIsHandledAtOnceAndTheHeldRequestsFollowInOrder() throws Exception {
        try (RawConnection raw = new RawConnection(server.port()).validate()) {
            java.nio.ByteBuffer batch = frame(WAIT).putLong(1);
            string(batch, "/never");
            batch.put((byte) GET);
            string(batch, "/never");
            batch.put((byte) PING).putInt(5);
            raw.send(batch);
            awaitPendingWaits(server, 1);
            raw.send(frame(CANCEL_WAIT));
            assertThat(raw.readByte()).isEqualTo(1); // WAIT_CANCELED, in the wait's place
            assertThat(raw.readVector()).isEmpty();   // the held GET, answered after the cancel
            assertThat(raw.readInt()).isEqualTo(5);
            assertThat(raw.silentFor(200)).isTrue();
            awaitPendingWaits(server, 0);
        }
    }

    @Test
    void getIsOneWriteOfWaitAndGet() {
        TcpStoreClient store = client();
        store.set("one", bytes("trip")).await().atMost(AWAIT);
        StoreStats before = server.stats().await().atMost(AWAIT);
        assertThat(text(store.get("one", AWAIT).await().atMost(AWAIT))).isEqualTo("trip");
        StoreStats after = server.stats().await().atMost(AWAIT);
        assertThat(after.opsServed().get("WAIT") - before.opsServed().getOrDefault("WAIT", 0L)).isEqualTo(1);
        assertThat(after.opsServed().get("GET") - before.opsServed().getOrDefault("GET", 0L)).isEqualTo(1);
    }

    @Test
    void manyConcurrentGetsWithTimeoutsKeepAnswersMatched() {
        TcpStoreClient store = client();
        TcpStoreClient other = client();
        List<CompletableFuture<byte[]>> gets = new ArrayList<>();
        List<CompletableFuture<Long>> adds = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            // odd keys never come: their gets time out (CANCEL_WAIT with a held GET behind it)
            gets.add(store.get("k" + i, Duration.ofMillis(i % 2 == 1 ? 20 : 5000)).subscribeAsCompletionStage());
            adds.add(store.add("cnt", 1).subscribeAsCompletionStage());
        }
        for (int i = 0; i < 50; i += 2) {
            other.set("k" + i, bytes("v" + i)).await().atMost(AWAIT);
        }
        for (int i = 0; i < 50; i++) {
            CompletableFuture<byte[]> get = gets.get(i);
            if (i % 2 == 0) {
                assertThat(text(get.join())).isEqualTo("v" + i);
            } else {
                int k = i;
                assertThatThrownBy(get::join).hasCauseInstanceOf(StoreTimeoutException.class)
                        .hasMessageContaining("[k" + k + "]");
            }
        }
        List<Long> counts = new ArrayList<>();
        adds.forEach(a -> counts.add(a.join()));
        assertThat(counts).doesNotHaveDuplicates().hasSize(50);
        assertThat(store.add("cnt", 0).await().atMost(AWAIT)).isEqualTo(50L);
    }
}
