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
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.wire.TcpStoreWire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients that do not read their answers (or read them slowly) cannot make the server hold more than
 * the bounds of {@link StoreLimits}, and others are served meanwhile. Hand-made frames on raw sockets
 * with small receive buffers, so that the kernel stops taking answers after a few KiB.
 */
@Timeout(60)
class StoreBackpressureTest extends VertxTest {

    private static final int SET = 1, GET = 3, WAIT = 6, PING = 13;
    private static final int SOFT = 64 * 1024;
    private static final int VALUE = 256 * 1024;

    private StoreServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private void start(long soft, long hard, Duration drainTimeout) {
        server = startServer(vertx, StoreLimits.defaults().withAnswerQueue(soft, hard, drainTimeout));
    }

    @Test
    void aClientThatReadsNothingIsPausedWithItsQueueUnderTheBoundThenClosedAtTheTimeLimit() throws Exception {
        start(SOFT, 4 * SOFT, Duration.ofSeconds(2));
        TcpStoreClient other = connect(vertx, server.port());
        try (RawConnection slow = new RawConnection(server.port(), 4096).validate()) {
            slow.send(string(frame(SET), "/big").putLong(VALUE)).sendBytes(new byte[VALUE]);
            slow.sendBytes(gets("/big", 400)); // 100 MiB of answers, none read

            StoreConnectionStats backedUp = awaitConnection(slow, StoreConnectionStats::backedUp);
            assertThat(backedUp.readingPaused()).isTrue();
            // While it stays stuck: never more than the bound plus one slice queued, plus one answer unsent.
            for (int i = 0; i < 20; i++) {
                StoreConnectionStats now = connection(slow);
                if (now == null) {
                    break; // closed already (a slow machine)
                }
                assertThat(now.answerBytesQueued()).isLessThanOrEqualTo(SOFT + AnswerQueue.SLICE_BYTES);
                assertThat(now.answerBytesUnsent()).isLessThanOrEqualTo(SOFT + 8 + VALUE);
                // Others are served meanwhile.
                other.set("other/" + i, bytes("v" + i)).await().atMost(AWAIT);
                assertThat(text(other.get("other/" + i, AWAIT).await().atMost(AWAIT))).isEqualTo("v" + i);
                Thread.sleep(50);
            }

            awaitClosedStuck(1);
            awaitGone(slow);
            assertThat(slow.readsToTheEnd()).isTrue();
            other.ping().await().atMost(AWAIT);
        } finally {
            other.close();
        }
    }

    @Test
    void queuedBytesPastTheHardBoundCloseTheConnection() throws Exception {
        // A hard bound below the soft bound plus one 64 KiB slice: the first slice the kernel does not take passes it.
        start(32 * 1024, 48 * 1024, Duration.ofSeconds(60));
        try (RawConnection slow = new RawConnection(server.port(), 4096).validate()) {
            slow.send(string(frame(SET), "/big").putLong(VALUE)).sendBytes(new byte[VALUE]);
            slow.sendBytes(gets("/big", 100));
            awaitClosedStuck(1);
            awaitGone(slow);
        }
    }

    @Test
    void aClientThatReadsSlowlyGetsEveryAnswerIntactAndIsNotClosed() throws Exception {
        start(SOFT, 4 * SOFT, Duration.ofSeconds(2));
        byte[] value = new byte[VALUE];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (i * 31 + (i >>> 8));
        }
        try (RawConnection reader = new RawConnection(server.port(), 4096).validate()) {
            reader.send(string(frame(SET), "/big").putLong(VALUE)).sendBytes(value);
            reader.sendBytes(gets("/big", 40));
            reader.send(frame(PING).putInt(4242));
            awaitConnection(reader, StoreConnectionStats::backedUp);
            for (int i = 0; i < 40; i++) {
                assertThat(reader.readVector()).as("answer %d", i).isEqualTo(value);
                if (i % 10 == 0) {
                    Thread.sleep(100); // slow, but reading: no time limit applies
                }
            }
            assertThat(reader.readInt()).isEqualTo(4242);
        }
        assertThat(server.stats().await().atMost(AWAIT).connectionsClosedStuck()).isZero();
    }

    @Test
    void aPausedConnectionsWaitIsAnsweredAndItsOwnLaterSetReleasesItOnceItReads() throws Exception {
        start(SOFT, 4 * SOFT, Duration.ofSeconds(30));
        try (RawConnection client = new RawConnection(server.port(), 4096).validate()) {
            client.send(string(frame(SET), "/big").putLong(VALUE)).sendBytes(new byte[VALUE]);
            client.sendBytes(gets("/big", 20));
            awaitConnection(client, StoreConnectionStats::backedUp);
            // Behind the answers it does not read: a WAIT, then the SET that satisfies it (read only once it drains).
            client.send(string(frame(WAIT).putLong(1), "/released"));
            client.send(string(string(frame(SET), "/released"), "yes"));
            for (int i = 0; i < 20; i++) {
                assertThat(client.readVector()).hasSize(VALUE);
            }
            assertThat(client.readByte()).as("STOP_WAITING").isEqualTo(TcpStoreWire.WAIT_STOP_WAITING);
        }
    }

    @Test
    void aConnectionThatOnlyWaitsIsNeitherPausedNorClosedByTheTimeLimit() throws Exception {
        start(SOFT, 4 * SOFT, Duration.ofMillis(300));
        TcpStoreClient setter = connect(vertx, server.port());
        try (RawConnection waiter = new RawConnection(server.port(), 4096).validate()) {
            waiter.send(string(frame(WAIT).putLong(1), "/later"));
            StoreTestSupport.awaitPendingWaits(server, 1);
            Thread.sleep(1000); // over three time limits with nothing to send it
            StoreConnectionStats idle = connection(waiter);
            assertThat(idle).isNotNull();
            assertThat(idle.readingPaused()).isFalse();
            setter.set("later", bytes("now")).await().atMost(AWAIT);
            assertThat(waiter.readByte()).isEqualTo(TcpStoreWire.WAIT_STOP_WAITING);
        } finally {
            setter.close();
        }
        assertThat(server.stats().await().atMost(AWAIT).connectionsClosedStuck()).isZero();
    }

    @Test
    void requestsHeldBehindAWaitStopTheReadingAtTheBoundAndAreServedOnceItEnds() throws Exception {
        start(SOFT, 4 * SOFT, Duration.ofSeconds(30));
        int pings = 100_000; // 500 KB of PINGs held behind the WAIT
        TcpStoreClient setter = connect(vertx, server.port());
        try (RawConnection client = new RawConnection(server.port(), 4096).validate()) {
            client.send(string(frame(WAIT).putLong(1), "/gate"));
            StoreTestSupport.awaitPendingWaits(server, 1);
            ByteBuffer all = ByteBuffer.allocate(pings * 5).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < pings; i++) {
                all.put((byte) PING).putInt(i);
            }
            Thread writer = new Thread(() -> {
                try {
                    client.sendBytes(all.array()); // blocks once the server stops reading
                } catch (IOException ignored) {
                    // the test fails on the reads below
                }
            });
            writer.start();
            StoreConnectionStats paused = awaitConnection(client, StoreConnectionStats::readingPaused);
            // Read up to the bound, then one more read of the socket at most (Netty reads 64 KiB at a time).
            assertThat(paused.requestBytesHeld()).isBetween((long) SOFT, SOFT + 64 * 1024L);
            setter.set("gate", bytes("open")).await().atMost(AWAIT);
            assertThat(client.readByte()).isEqualTo(TcpStoreWire.WAIT_STOP_WAITING);
            for (int i = 0; i < pings; i++) {
                assertThat(client.readInt()).isEqualTo(i);
            }
            writer.join(AWAIT.toMillis());
        } finally {
            setter.close();
        }
    }

    // ---- helpers ----

    private static byte[] gets(String key, int count) {
        ByteBuffer one = string(frame(GET), key);
        byte[] frame = Arrays.copyOf(one.array(), one.position());
        byte[] all = new byte[frame.length * count];
        for (int i = 0; i < count; i++) {
            System.arraycopy(frame, 0, all, i * frame.length, frame.length);
        }
        return all;
    }

    /** The server's view of {@code raw}'s connection, or null when the server no longer has it. */
    private StoreConnectionStats connection(RawConnection raw) {
        return server.connectionStats().await().atMost(AWAIT).stream()
                .filter(c -> c.remote().endsWith(":" + raw.localPort())).findFirst().orElse(null);
    }

    /** Polls until the server's view of the connection satisfies {@code condition} (a bound that only stops hangs). */
    private StoreConnectionStats awaitConnection(RawConnection raw, Predicate<StoreConnectionStats> condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            StoreConnectionStats now = connection(raw);
            if (now != null && condition.test(now)) {
                return now;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("connection never reached the state; last seen: " + now);
            }
            Thread.onSpinWait();
        }
    }

    /** Polls until the server no longer lists the connection (its socket closed). */
    private void awaitGone(RawConnection raw) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (connection(raw) != null) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server still lists the connection it closed: " + connection(raw)
                        + " port " + raw.localPort() + " all " + server.connectionStats().await().atMost(AWAIT));
            }
            Thread.sleep(10);
        }
    }

    private void awaitClosedStuck(long count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (server.stats().await().atMost(AWAIT).connectionsClosedStuck() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server never closed the stuck connection");
            }
            Thread.onSpinWait();
        }
    }
}
