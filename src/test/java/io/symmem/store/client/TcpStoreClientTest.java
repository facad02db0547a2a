package io.symmem.store.client;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.awaitPendingWaits;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.VertxTest;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class TcpStoreClientTest extends VertxTest {

    StoreServer server;
    private final List<TcpStoreClient> clients = new ArrayList<>();

    @BeforeEach
    void startServerForTest() {
        server = startServer(vertx);
    }

    @AfterEach
    void stopAll() {
        clients.forEach(TcpStoreClient::close);
        server.close();
    }

    /** Overridden by {@link PipelinedTcpStoreClientTest} to run every test with WAIT+GET pipelining. */
    TcpStoreClient connectClient(int port) {
        return connect(vertx, port);
    }

    TcpStoreClient client() {
        TcpStoreClient client = connectClient(server.port());
        clients.add(client);
        return client;
    }

    @Test
    void setThenGetReturnsTheValue() {
        TcpStoreClient store = client();
        store.set("a", bytes("alpha")).await().atMost(AWAIT);
        assertThat(text(store.get("a", AWAIT).await().atMost(AWAIT))).isEqualTo("alpha");
        store.set("a", bytes("beta")).await().atMost(AWAIT);
        assertThat(text(store.get("a", AWAIT).await().atMost(AWAIT))).isEqualTo("beta");
    }

    @Test
    void emptyAndBinaryValuesRoundTrip() {
        TcpStoreClient store = client();
        byte[] binary = {0, -1, 10, 13, 127, -128};
        store.set("bin", binary).await().atMost(AWAIT);
        store.set("empty", new byte[0]).await().atMost(AWAIT);
        assertThat(store.get("bin", AWAIT).await().atMost(AWAIT)).isEqualTo(binary);
        assertThat(store.get("empty", AWAIT).await().atMost(AWAIT)).isEmpty();
    }

    @Test
    void getWaitsForALaterSetByAnotherClient() {
        TcpStoreClient reader = client();
        TcpStoreClient writer = client();
        CompletableFuture<byte[]> pending = reader.get("late", AWAIT).subscribeAsCompletionStage();
        awaitPendingWaits(server, 1);
        assertThat(pending).isNotDone();
        writer.set("late", bytes("now")).await().atMost(AWAIT);
        assertThat(text(pending.join())).isEqualTo("now");
    }

    @Test
    void setOnTheSameClientReleasesItsOwnPendingGet() {
        TcpStoreClient store = client();
        CompletableFuture<byte[]> pending = store.get("self", AWAIT).subscribeAsCompletionStage();
        store.set("self", bytes("mine")).await().atMost(AWAIT);
        assertThat(text(pending.join())).isEqualTo("mine");
    }

    @Test
    void getTimeoutNamesTheKeyAndTheStore() {
        TcpStoreClient store = client();
        long start = System.nanoTime();
        assertThatThrownBy(() -> store.get("never", Duration.ofMillis(300)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class)
                .hasMessage("store " + HOST + ":" + server.port() + ": timed out after 300 ms waiting for key(s) [never]")
                .satisfies(e -> assertThat(((StoreTimeoutException) e).keys()).containsExactly("never"));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        // The connection stays usable after the CANCEL_WAIT handshake.
        store.set("after", bytes("ok")).await().atMost(AWAIT);
        assertThat(text(store.get("after", AWAIT).await().atMost(AWAIT))).isEqualTo("ok");
    }

    @Test
    void awaitTimeoutNamesOnlyTheMissingKeys() {
        TcpStoreClient store = client();
        store.set("here", bytes("1")).await().atMost(AWAIT);
        assertThatThrownBy(() -> store.await(List.of("here", "gone1", "gone2"), Duration.ofSeconds(1)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class)
                .hasMessageContaining("timed out after 1 s waiting for key(s) [gone1, gone2]")
                .satisfies(e -> assertThat(((StoreTimeoutException) e).keys()).containsExactly("gone1", "gone2"));
    }

    @Test
    void awaitCompletesWhenAllKeysAreSet() {
        TcpStoreClient store = client();
        TcpStoreClient other = client();
        CompletableFuture<Void> all = store.await(List.of("x", "y"), AWAIT).subscribeAsCompletionStage();
        awaitPendingWaits(server, 1);
        other.set("x", bytes("1")).await().atMost(AWAIT);
        assertThat(other.check(List.of("x")).await().atMost(AWAIT)).isTrue();
        assertThat(all).isNotDone();
        other.set("y", bytes("2")).await().atMost(AWAIT);
        all.join();
        assertThat(store.await(List.of(), AWAIT).await().atMost(AWAIT)).isNull();
    }

    @Test
    void requestsQueuedBehindAWaitStillCompleteInOrder() {
        TcpStoreClient store = client();
        TcpStoreClient other = client();
        CompletableFuture<byte[]> first = store.get("gate", AWAIT).subscribeAsCompletionStage();
        CompletableFuture<Long> counted = store.add("counter", 5).subscribeAsCompletionStage();
        CompletableFuture<Boolean> checked = store.check(List.of("gate")).subscribeAsCompletionStage();
        other.set("gate", bytes("open")).await().atMost(AWAIT);
        assertThat(text(first.join())).isEqualTo("open");
        assertThat(counted.join()).isEqualTo(5L);
        assertThat(checked.join()).isTrue();
    }

    @Test
    void addReturnsTheNewValueAndStoresDecimalText() {
        TcpStoreClient store = client();
        assertThat(store.add("n", 1).await().atMost(AWAIT)).isEqualTo(1L);
        assertThat(store.add("n", 2).await().atMost(AWAIT)).isEqualTo(3L);
        assertThat(store.add("n", -10).await().atMost(AWAIT)).isEqualTo(-7L);
        assertThat(text(store.get("n", AWAIT).await().atMost(AWAIT))).isEqualTo("-7");
        store.set("m", bytes("40")).await().atMost(AWAIT);
        assertThat(store.add("m", 2).await().atMost(AWAIT)).isEqualTo(42L);
    }

    @Test
    void concurrentAddsFromManyClientsAreExact() {
        int clientCount = 8;
        int addsPerClient = 100;
        List<Uni<Long>> adds = new ArrayList<>();
        for (int c = 0; c < clientCount; c++) {
            TcpStoreClient store = client();
            for (int i = 0; i < addsPerClient; i++) {
                adds.add(store.add("shared", 1));
            }
        }
        List<Long> results = Uni.join().all(adds).andFailFast().await().atMost(AWAIT);
        // Every add saw a distinct intermediate value, and the total is exact.
        assertThat(results).doesNotHaveDuplicates().hasSize(clientCount * addsPerClient);
        assertThat(client().add("shared", 0).await().atMost(AWAIT)).isEqualTo((long) clientCount * addsPerClient);
    }

    @Test
    void deleteAndCheck() {
        TcpStoreClient store = client();
        assertThat(store.check(List.of("d")).await().atMost(AWAIT)).isFalse();
        assertThat(store.delete("d").await().atMost(AWAIT)).isFalse();
        store.set("d", bytes("v")).await().atMost(AWAIT);
        store.set("e", bytes("v")).await().atMost(AWAIT);
        assertThat(store.check(List.of("d", "e")).await().atMost(AWAIT)).isTrue();
        assertThat(store.check(List.of("d", "missing")).await().atMost(AWAIT)).isFalse();
        assertThat(store.check(List.of()).await().atMost(AWAIT)).isTrue();
        assertThat(store.numKeys().await().atMost(AWAIT)).isEqualTo(2L);
        assertThat(store.delete("d").await().atMost(AWAIT)).isTrue();
        assertThat(store.check(List.of("d")).await().atMost(AWAIT)).isFalse();
        assertThat(store.numKeys().await().atMost(AWAIT)).isEqualTo(1L);
        store.ping().await().atMost(AWAIT);
    }

    @Test
    void describeIsHostAndPort() {
        assertThat(client().describe()).isEqualTo(HOST + ":" + server.port());
    }

    @Test
    void clientStartedBeforeTheServerConnectsOnceItIsUp() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        CompletableFuture<TcpStoreClient> connecting =
                TcpStoreClient.connect(vertx, HOST, port, Duration.ofSeconds(10)).subscribeAsCompletionStage();
        // Let a few connection attempts fail before the server comes up.
        Thread.sleep(300);
        assertThat(connecting).isNotDone();
        StoreServer late = new StoreServer(vertx, HOST, port);
        try {
            late.start().await().atMost(AWAIT);
            TcpStoreClient store = connecting.get(5, java.util.concurrent.TimeUnit.SECONDS);
            clients.add(store);
            store.set("k", bytes("v")).await().atMost(AWAIT);
            assertThat(text(store.get("k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
        } finally {
            late.close();
        }
    }

    @Test
    void connectFailsAfterItsDeadlineNamingTheAddress() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        assertThatThrownBy(() -> TcpStoreClient.connect(vertx, HOST, port, Duration.ofMillis(400)).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("could not connect to store " + HOST + ":" + port + " within 400 ms");
    }

    @Test
    void serverClosedWhileAClientWaitsFailsInsteadOfHanging() {
        TcpStoreClient store = client();
        CompletableFuture<byte[]> pending = store.get("forever", Duration.ofSeconds(30)).subscribeAsCompletionStage();
        CompletableFuture<Long> queued = store.add("behind", 1).subscribeAsCompletionStage();
        awaitPendingWaits(server, 1);
        assertThat(pending).isNotDone();
        server.close();
        assertThatThrownBy(() -> Uni.createFrom().completionStage(pending).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessage("connection to store " + HOST + ":" + server.port() + " lost");
        assertThatThrownBy(() -> Uni.createFrom().completionStage(queued).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("lost");
        // Later calls wait for a reconnection, and fail once it gives up (after the connect timeout).
        assertThatThrownBy(() -> store.check(List.of("x")).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("lost");
    }

    @Test
    void closedClientFailsPendingAndLaterCalls() {
        TcpStoreClient store = client();
        CompletableFuture<byte[]> pending = store.get("forever", Duration.ofSeconds(30)).subscribeAsCompletionStage();
        store.close();
        assertThatThrownBy(() -> Uni.createFrom().completionStage(pending).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> store.set("k", bytes("v")).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class);
    }

    /**
     * A process ending: its Vert.x closes the client's connection and then refuses the reconnect. The
     * client gives up quietly (its pending call fails naming why) instead of throwing into Vert.x.
     */
    @Test
    void vertxShuttingDownUnderAConnectedClientEndsItQuietly() {
        Vertx own = Vertx.vertx();
        List<Throwable> uncaught = new java.util.concurrent.CopyOnWriteArrayList<>();
        own.exceptionHandler(uncaught::add);
        TcpStoreClient store = TcpStoreClient.connect(own, HOST, server.port(), Duration.ofSeconds(3)).await().atMost(AWAIT);
        CompletableFuture<byte[]> pending = store.get("never", Duration.ofSeconds(30)).subscribeAsCompletionStage();
        StoreTestSupport.awaitPendingWaits(server, 1);
        own.close().toCompletionStage().toCompletableFuture().join();
        assertThatThrownBy(() -> Uni.createFrom().completionStage(pending).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class);
        assertThatThrownBy(() -> store.ping().await().atMost(AWAIT)).isInstanceOf(StoreException.class);
        store.close(); // harmless once its Vert.x is gone
        assertThat(uncaught).isEmpty();
    }

    @Test
    void keysOverTheLimitAreRefusedBeforeSending() {
        TcpStoreClient store = client();
        String huge = "k".repeat(StoreLimits.DEFAULT_MAX_KEY_BYTES + 1);
        assertThatThrownBy(() -> store.set(huge, bytes("v")).await().atMost(AWAIT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceeds the store's limit");
        // The connection was not harmed.
        store.ping().await().atMost(AWAIT);
    }
}
