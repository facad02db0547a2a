package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.awaitPendingWaits;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static io.symmem.store.StoreTestSupport.subscribe;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.StoreTestSupport.Subscribed;
import io.symmem.store.client.TcpStoreClient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Waits and ADDs on side connections: a rank's long waits never hold up, nor a bad ADD break, its other requests. */
@Timeout(30)
class SideConnectionStoreTest extends StoreServerTest {
    private static final Duration LONG = Duration.ofMinutes(5);
    private SideConnections sides;
    private TcpStoreClient shared;
    private SideConnectionStore store;

    @BeforeEach
    void connectStore() {
        sides = new SideConnections(() -> TcpStoreClient.connect(vertx, HOST, server.port(), Duration.ofSeconds(3),
                TcpStoreClient.Options.forSymmemServer()));
        shared = connectPipelined(vertx, server.port());
        store = new SideConnectionStore(shared, sides);
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    @Test
    void aLongWaitHoldsUpNoOtherRequest() throws Exception {
        Subscribed<byte[]> longPoll = subscribe(store.get("never", LONG));
        awaitPendingWaits(server, 1);
        // On one shared connection every one of these would wait for "never" (LONG).
        assertThat(store.add("n", 1).await().atMost(AWAIT)).isEqualTo(1);
        assertThat(store.check(List.of("never")).await().atMost(AWAIT)).isFalse();
        store.set("k", bytes("v")).await().atMost(AWAIT);
        assertThat(text(store.get("k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
        // A second wait is pending in the server beside the first one, not queued behind it.
        Subscribed<Void> second = subscribe(store.await(List.of("other"), LONG));
        awaitPendingWaits(server, 2);
        store.set("other", bytes("x")).await().atMost(AWAIT);
        second.result().get(5, TimeUnit.SECONDS);
        store.set("never", bytes("at last")).await().atMost(AWAIT);
        assertThat(text(longPoll.result().get(5, TimeUnit.SECONDS))).isEqualTo("at last");
    }

    @Test
    void anAddOnATextValueIsBadInputAndCostsNoOtherRequestItsConnection() throws Exception {
        store.set("text", bytes("not a number")).await().atMost(AWAIT);
        Subscribed<byte[]> longPoll = subscribe(store.get("gate", LONG));
        awaitPendingWaits(server, 1);
        assertThatThrownBy(() -> store.add("text", 1).await().atMost(AWAIT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("store " + server.address() + ": add on key 'text' whose value is not a decimal integer");
        // The server closed only the connection that carried the ADD, and it is not kept.
        assertThat(shared.reconnectCount()).isZero();
        awaitPendingWaits(server, 1);
        assertThat(store.add("n", 2).await().atMost(AWAIT)).isEqualTo(2);
        store.set("gate", bytes("open")).await().atMost(AWAIT);
        assertThat(text(longPoll.result().get(5, TimeUnit.SECONDS))).isEqualTo("open");
        assertThat(shared.reconnectCount()).isZero();
    }

    @Test
    void aGetOnAWaitConnectionSeesTheSetJustMadeOnTheSharedOne() {
        for (int i = 0; i < 300; i++) {
            store.set("counter", bytes(Integer.toString(i))).await().atMost(AWAIT);
            assertThat(text(store.get("counter", AWAIT).await().atMost(AWAIT))).isEqualTo(Integer.toString(i));
        }
    }

    /** Four threads at once, each setting its own key and reading it back: each sees its latest value. */
    @Test
    void threadsThatSetAndReadBackAtOnceEachSeeTheirOwnLatestValue() throws Exception {
        int threads = 4, rounds = 150;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<String>>> stale = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String key = "own/" + t;
                stale.add(pool.submit(() -> {
                    List<String> seen = new ArrayList<>();
                    for (int i = 0; i < rounds; i++) {
                        store.set(key, bytes(Integer.toString(i))).await().atMost(AWAIT);
                        String got = i % 2 == 0 ? text(store.get(key, AWAIT).await().atMost(AWAIT))
                                : text(store.multiGet(List.of(key), AWAIT).await().atMost(AWAIT).get(0));
                        if (!got.equals(Integer.toString(i))) {
                            seen.add(key + " round " + i + " read " + got);
                        }
                    }
                    return seen;
                }));
            }
            for (Future<List<String>> thread : stale) {
                assertThat(thread.get(60, TimeUnit.SECONDS)).as("reads that missed their thread's own set").isEmpty();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The kernel may deliver a side connection's GET before a SET written earlier on the shared one, so
     * a read of a key this process wrote waits for a PING on the shared connection first; a read of a
     * key it did not write, or wrote and already confirmed, does not. Counts the PINGs asked of the
     * shared connection (the server's count would also see the PING each new side connection sends).
     */
    @Test
    void onlyAReadOfAKeyWrittenHereAndNotYetConfirmedCostsAPing() {
        AtomicInteger pings = new AtomicInteger();
        Store countingShared = (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("ping")) {
                        pings.incrementAndGet();
                    }
                    try {
                        return method.invoke(shared, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        // Closed with `store` (the same shared connection and side connections).
        SideConnectionStore watched = new SideConnectionStore(countingShared, sides);
        shared.set("theirs", bytes("t")).await().atMost(AWAIT); // written by another client of the store
        assertThat(text(watched.get("theirs", AWAIT).await().atMost(AWAIT))).isEqualTo("t");
        assertThat(pings).hasValue(0);
        watched.set("mine", bytes("1")).await().atMost(AWAIT);
        assertThat(text(watched.get("mine", AWAIT).await().atMost(AWAIT))).isEqualTo("1");
        assertThat(pings).hasValue(1);
        assertThat(text(watched.get("mine", AWAIT).await().atMost(AWAIT))).isEqualTo("1");
        assertThat(watched.multiGet(List.of("theirs", "mine"), AWAIT).await().atMost(AWAIT)).hasSize(2);
        assertThat(pings).hasValue(1);
        watched.multiSet(List.of("m1", "m2"), List.of(bytes("5"), bytes("x"))).await().atMost(AWAIT);
        assertThat(watched.add("m1", 2).await().atMost(AWAIT)).isEqualTo(7);
        assertThat(pings).hasValue(2);
        watched.queuePush("q", bytes("first")).await().atMost(AWAIT);
        assertThat(text(watched.queuePop("q", AWAIT).await().atMost(AWAIT))).isEqualTo("first");
        assertThat(pings).hasValue(3);
    }

    @Test
    void aCancelledWaitIsWithdrawnAndItsConnectionServesTheNextWait() {
        Subscribed<byte[]> abandoned = subscribe(store.get("never", LONG));
        awaitPendingWaits(server, 1);
        abandoned.cancel();
        awaitPendingWaits(server, 0);
        store.set("k", bytes("v")).await().atMost(AWAIT);
        assertThat(text(store.get("k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
        assertThat(sides.openCount()).isEqualTo(1);
    }

    @Test
    void aBurstOfWaitsKeepsOnlyAFewIdleConnectionsAfterwards() throws Exception {
        int burst = SideConnections.KEEP_IDLE + 3;
        List<Subscribed<byte[]>> polls = new ArrayList<>();
        for (int i = 0; i < burst; i++) {
            polls.add(subscribe(store.get("gate", LONG)));
        }
        awaitPendingWaits(server, burst);
        assertThat(sides.openCount()).isEqualTo(burst);
        store.set("gate", bytes("open")).await().atMost(AWAIT);
        for (Subscribed<byte[]> poll : polls) {
            assertThat(text(poll.result().get(5, TimeUnit.SECONDS))).isEqualTo("open");
        }
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (sides.openCount() != SideConnections.KEEP_IDLE) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still " + sides.openCount() + " wait connections open");
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void closingFailsRunningWaitsAndLaterOnes() {
        Subscribed<byte[]> running = subscribe(store.get("never", LONG));
        awaitPendingWaits(server, 1);
        store.close();
        assertThatThrownBy(() -> running.result().get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(StoreException.class);
        assertThatThrownBy(() -> store.get("k", AWAIT).await().atMost(AWAIT)).isInstanceOf(StoreException.class)
                .hasMessageContaining("closed");
        awaitPendingWaits(server, 0);
    }
}
