package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * c10d semantics of every operation, through each way of reaching the store (TCP, in-process, event bus,
 * prefix view). {@code EtcdStoreSemanticsTest} runs the same tests against the store on etcd.
 */
@Timeout(30)
class StoreSemanticsTest extends VertxTest {

    private StoreServer server;
    private final java.util.List<Store> opened = new java.util.ArrayList<>();
    private StoreEventBusService service;

    @BeforeEach
    void startServerOnly() {
        server = startServer(vertx);
    }

    @AfterEach
    void stop() {
        if (service != null) {
            service.close();
        }
        opened.forEach(Store::close);
        server.close();
    }

    static Stream<Arguments> stores() {
        return Stream.of(
                Arguments.of("tcp", (Function<StoreSemanticsTest, Store>) t -> connect(vertx, t.server.port())),
                Arguments.of("tcp-pipelined", (Function<StoreSemanticsTest, Store>) t -> connectPipelined(vertx, t.server.port())),
                Arguments.of("blocking", (Function<StoreSemanticsTest, Store>) t -> BlockingStoreClient.connect(
                        "127.0.0.1", t.server.port(), Duration.ofSeconds(10), TcpStoreClient.Options.defaults())),
                Arguments.of("blocking-pipelined", (Function<StoreSemanticsTest, Store>) t -> BlockingStoreClient.connect(
                        "127.0.0.1", t.server.port(), Duration.ofSeconds(10), TcpStoreClient.Options.forSymmemServer())),
                Arguments.of("local", (Function<StoreSemanticsTest, Store>) t -> t.server.localStore()),
                Arguments.of("event-bus", (Function<StoreSemanticsTest, Store>) t -> {
                    String address = "symmem.store.test." + System.nanoTime();
                    t.service = new StoreEventBusService(vertx, connect(vertx, t.server.port()), address);
                    t.service.register().await().atMost(AWAIT);
                    return new EventBusStore(vertx, address, t.server.address(), Duration.ofSeconds(5));
                }),
                Arguments.of("prefix", (Function<StoreSemanticsTest, Store>) t -> new PrefixStore("p", t.server.localStore())));
    }

    /** Where the stores under test live, as their error messages must name it. */
    protected String storeAddress() {
        return server.address();
    }

    private Store open(Function<StoreSemanticsTest, Store> factory) {
        Store store = factory.apply(this);
        opened.add(store);
        return store;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void setGetAddDeleteCheck(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        s.set("a/b", bytes("v")).await().atMost(AWAIT);
        assertThat(text(s.get("a/b", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
        assertThat(s.add("n", 2).await().atMost(AWAIT)).isEqualTo(2);
        assertThat(s.add("n", -5).await().atMost(AWAIT)).isEqualTo(-3);
        assertThat(text(s.get("n", AWAIT).await().atMost(AWAIT))).isEqualTo("-3");
        assertThat(s.check(List.of("a/b", "n")).await().atMost(AWAIT)).isTrue();
        assertThat(s.check(List.of("a/b", "missing")).await().atMost(AWAIT)).isFalse();
        assertThat(s.delete("a/b").await().atMost(AWAIT)).isTrue();
        assertThat(s.delete("a/b").await().atMost(AWAIT)).isFalse();
        s.ping().await().atMost(AWAIT);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void compareSetFollowsC10d(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        // Missing key and non-empty expected: nothing stored, expected returned.
        assertThat(text(s.compareSet("cas", bytes("x"), bytes("y")).await().atMost(AWAIT))).isEqualTo("x");
        assertThat(s.check(List.of("cas")).await().atMost(AWAIT)).isFalse();
        // Missing key and empty expected: desired stored.
        assertThat(text(s.compareSet("cas", new byte[0], bytes("one")).await().atMost(AWAIT))).isEqualTo("one");
        // Mismatch: current value returned, unchanged.
        assertThat(text(s.compareSet("cas", bytes("zzz"), bytes("two")).await().atMost(AWAIT))).isEqualTo("one");
        // Match: swapped.
        assertThat(text(s.compareSet("cas", bytes("one"), bytes("two")).await().atMost(AWAIT))).isEqualTo("two");
        assertThat(text(s.get("cas", AWAIT).await().atMost(AWAIT))).isEqualTo("two");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void appendCreatesThenExtendsAndWakesWaiters(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        Store writer = open(factory);
        // The waiter runs on its own thread: a blocking client waits on the caller's thread.
        CompletableFuture<byte[]> waiting = CompletableFuture.supplyAsync(() -> s.get("log", AWAIT).await().atMost(AWAIT));
        writer.append("log", bytes("ab")).await().atMost(AWAIT);
        assertThat(text(waiting.join())).isEqualTo("ab");
        s.append("log", bytes("cd")).await().atMost(AWAIT);
        assertThat(text(s.get("log", AWAIT).await().atMost(AWAIT))).isEqualTo("abcd");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void multiSetThenMultiGetInOrder(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        s.multiSet(List.of("m1", "m2", "m3"), List.of(bytes("1"), bytes(""), bytes("3"))).await().atMost(AWAIT);
        List<byte[]> values = s.multiGet(List.of("m3", "m1", "m2"), AWAIT).await().atMost(AWAIT);
        assertThat(values).extracting(StoreTestSupport::text).containsExactly("3", "1", "");
        assertThat(s.multiGet(List.of(), AWAIT).await().atMost(AWAIT)).isEmpty();
        assertThatThrownBy(() -> s.multiSet(List.of("a"), List.of()).await().atMost(AWAIT))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void multiGetTimesOutNamingTheMissingKeys(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        s.set("here", bytes("x")).await().atMost(AWAIT);
        assertThatThrownBy(() -> s.multiGet(List.of("here", "absent"), Duration.ofMillis(200)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class)
                .hasMessageContaining("absent")
                .satisfies(e -> assertThat(((StoreTimeoutException) e).keys()).anyMatch(k -> k.endsWith("absent")).hasSize(1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void numKeysAndListKeysCountValuesNotQueues(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        s.set("k1", bytes("1")).await().atMost(AWAIT);
        s.set("dir/k2", bytes("2")).await().atMost(AWAIT);
        s.queuePush("q", bytes("item")).await().atMost(AWAIT);
        assertThat(s.numKeys().await().atMost(AWAIT)).isEqualTo(2);
        assertThat(s.listKeys().await().atMost(AWAIT)).containsExactlyInAnyOrder("k1", "dir/k2");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void queueIsFifoAndPopWaitsForAPush(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        assertThat(s.queueLength("jobs").await().atMost(AWAIT)).isZero();
        s.queuePush("jobs", bytes("first")).await().atMost(AWAIT);
        s.queuePush("jobs", bytes("second")).await().atMost(AWAIT);
        assertThat(s.queueLength("jobs").await().atMost(AWAIT)).isEqualTo(2);
        assertThat(text(s.queuePop("jobs", AWAIT).await().atMost(AWAIT))).isEqualTo("first");
        assertThat(text(s.queuePop("jobs", AWAIT).await().atMost(AWAIT))).isEqualTo("second");
        Store writer = open(factory);
        CompletableFuture<byte[]> blocked = CompletableFuture.supplyAsync(() -> s.queuePop("jobs", AWAIT).await().atMost(AWAIT));
        assertThat(blocked).isNotDone();
        writer.queuePush("jobs", bytes("third")).await().atMost(AWAIT);
        assertThat(text(blocked.join())).isEqualTo("third");
        assertThat(s.queueLength("jobs").await().atMost(AWAIT)).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void popOfAnEmptyQueueTimesOutNamingTheQueue(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        assertThatThrownBy(() -> s.queuePop("empty", Duration.ofMillis(150)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class)
                .hasMessageContaining("empty")
                .hasMessageContaining(storeAddress());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void getTimesOutNamingStoreAndKey(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        assertThatThrownBy(() -> s.get("never", Duration.ofMillis(150)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class)
                .hasMessageContaining(storeAddress())
                .hasMessageContaining("never");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void oversizedValuesAreRefusedBeforeSending(String name, Function<StoreSemanticsTest, Store> factory) {
        Store s = open(factory);
        byte[] huge = new byte[StoreLimits.DEFAULT_MAX_VALUE_BYTES + 1];
        assertThatThrownBy(() -> s.set("big", huge).await().atMost(AWAIT)).isInstanceOf(StoreLimitExceededException.class);
        s.ping().await().atMost(AWAIT);
    }
}
