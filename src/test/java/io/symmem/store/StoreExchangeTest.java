package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Four ranks, each with its own TcpStoreClient, rendezvous through one server. */
@Timeout(30)
class StoreExchangeTest extends VertxTest {

    private static final int WORLD = 4;

    private StoreServer server;
    private final List<TcpStoreClient> clients = new ArrayList<>();

    @BeforeEach
    void start() {
        server = startServer(vertx);
        for (int r = 0; r < WORLD; r++) {
            clients.add(connect(vertx, server.port()));
        }
    }

    @AfterEach
    void stop() {
        clients.forEach(TcpStoreClient::close);
        server.close();
    }

    private List<StoreExchange> group(String name, int size) {
        List<StoreExchange> ranks = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            ranks.add(new StoreExchange(clients.get(r), name, r, size));
        }
        return ranks;
    }

    private static <T> List<T> awaitAll(List<Uni<T>> unis) {
        return Uni.join().all(unis).andFailFast().await().atMost(AWAIT);
    }

    private static List<String> texts(List<byte[]> values) {
        return values.stream().map(StoreTestSupport::text).toList();
    }

    @Test
    void allGatherGivesEveryRankEveryValueInRankOrder() {
        List<StoreExchange> world = group("world", WORLD);
        for (int round = 0; round < 3; round++) {
            List<Uni<List<byte[]>>> calls = new ArrayList<>();
            for (int r = WORLD - 1; r >= 0; r--) { // start in reverse order: order of arrival must not matter
                calls.add(world.get(r).allGather(bytes("r" + r + "@" + round), AWAIT));
            }
            for (List<byte[]> gathered : awaitAll(calls)) {
                assertThat(texts(gathered)).containsExactly("r0@" + round, "r1@" + round, "r2@" + round, "r3@" + round);
            }
        }
        assertThat(world.get(0).rounds()).isEqualTo(3);
    }

    @Test
    void broadcastDeliversTheRootValue() {
        List<StoreExchange> world = group("world", WORLD);
        List<Uni<byte[]>> calls = new ArrayList<>();
        for (int r = 0; r < WORLD; r++) {
            calls.add(world.get(r).broadcast(2, r == 2 ? bytes("from-2") : null, AWAIT));
        }
        assertThat(texts(awaitAll(calls))).containsOnly("from-2").hasSize(WORLD);
    }

    @Test
    void barrierCompletesOnlyWhenAllRanksArrived() {
        List<StoreExchange> world = group("world", WORLD);
        List<CompletableFuture<Void>> early = new ArrayList<>();
        for (int r = 0; r < WORLD - 1; r++) {
            early.add(world.get(r).barrier(AWAIT).subscribeAsCompletionStage());
        }
        StoreTestSupport.awaitPendingWaits(server, WORLD - 1);
        assertThat(early).noneMatch(CompletableFuture::isDone);
        world.get(WORLD - 1).barrier(AWAIT).await().atMost(AWAIT);
        early.forEach(CompletableFuture::join);
    }

    @Test
    void aMissingRankIsNamedOnEveryOtherRankWithinTheTimeout() {
        List<StoreExchange> world = group("world", WORLD);
        List<CompletableFuture<List<byte[]>>> calls = new ArrayList<>();
        long start = System.nanoTime();
        Duration timeout = Duration.ofSeconds(1);
        // Ranks 0..2 enter round 0; rank 3 never calls.
        for (int r = 0; r < WORLD - 1; r++) {
            calls.add(world.get(r).allGather(bytes("v" + r), timeout).subscribeAsCompletionStage());
        }
        for (CompletableFuture<List<byte[]>> call : calls) {
            assertThatThrownBy(call::join)
                    .isInstanceOf(CompletionException.class)
                    .cause()
                    .isInstanceOf(RendezvousTimeoutException.class)
                    .hasMessage("all_gather of group 'world' (instance 1, round 0) timed out after 1 s: no value from rank(s) [3] via store "
                            + HOST + ":" + server.port())
                    .satisfies(e -> {
                        RendezvousTimeoutException timedOut = (RendezvousTimeoutException) e;
                        assertThat(timedOut.missingRanks()).containsExactly(3);
                        assertThat(timedOut.groupName()).isEqualTo("world");
                        assertThat(timedOut.round()).isZero();
                        assertThat(timedOut.keys()).containsExactly("symmem/ex/world/1/0/3");
                    });
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void broadcastTimeoutNamesTheRoot() {
        StoreExchange rank1 = new StoreExchange(clients.get(1), "tp", 1, 2);
        assertThatThrownBy(() -> rank1.broadcast(0, null, Duration.ofMillis(500)).await().atMost(AWAIT))
                .isInstanceOf(RendezvousTimeoutException.class)
                .hasMessageStartingWith("broadcast of group 'tp' (instance 1, round 0) timed out after 500 ms: no value from rank(s) [0]");
    }

    @Test
    void barrierTimeoutNamesAllAbsentRanks() {
        StoreExchange rank0 = new StoreExchange(clients.get(0), "world", 0, WORLD);
        assertThatThrownBy(() -> rank0.barrier(Duration.ofMillis(500)).await().atMost(AWAIT))
                .isInstanceOf(RendezvousTimeoutException.class)
                .hasMessageContaining("barrier of group 'world' (instance 1, round 0)")
                .hasMessageContaining("no value from rank(s) [1, 2, 3]");
    }

    /**
     * The world and a subgroup {0, 1} interleave their collectives in opposite orders on ranks 0 and 1.
     * With one process-wide sequence counter (PyTorch) rank 0 would label the world call 0 and the
     * subgroup call 1 while rank 1 does the reverse, and the rendezvous would mix values or hang.
     * Round counters per group keep them apart.
     */
    @Test
    void groupsInterleavedInDifferentOrdersDoNotInterfere() {
        List<StoreExchange> world = group("world", WORLD);
        List<StoreExchange> pair = group("pair", 2);
        List<Uni<List<byte[]>>> worldCalls = new ArrayList<>();
        List<Uni<List<byte[]>>> pairCalls = new ArrayList<>();

        // rank 0: world, then pair
        worldCalls.add(world.get(0).allGather(bytes("w0"), AWAIT));
        pairCalls.add(pair.get(0).allGather(bytes("p0"), AWAIT));
        // rank 1: pair, then world
        pairCalls.add(pair.get(1).allGather(bytes("p1"), AWAIT));
        worldCalls.add(world.get(1).allGather(bytes("w1"), AWAIT));
        // ranks 2 and 3: world only
        worldCalls.add(world.get(2).allGather(bytes("w2"), AWAIT));
        worldCalls.add(world.get(3).allGather(bytes("w3"), AWAIT));

        for (List<byte[]> gathered : awaitAll(worldCalls)) {
            assertThat(texts(gathered)).containsExactly("w0", "w1", "w2", "w3");
        }
        for (List<byte[]> gathered : awaitAll(pairCalls)) {
            assertThat(texts(gathered)).containsExactly("p0", "p1");
        }

        // A second round in yet another interleaving, mixing op kinds.
        Uni<byte[]> pairBroadcast1 = pair.get(1).broadcast(0, null, AWAIT);
        List<Uni<Void>> worldBarrier = new ArrayList<>();
        for (int r = 3; r >= 0; r--) {
            worldBarrier.add(world.get(r).barrier(AWAIT));
        }
        Uni<byte[]> pairBroadcast0 = pair.get(0).broadcast(0, bytes("p-root"), AWAIT);
        awaitAll(worldBarrier);
        assertThat(text(pairBroadcast1.await().atMost(AWAIT))).isEqualTo("p-root");
        assertThat(text(pairBroadcast0.await().atMost(AWAIT))).isEqualTo("p-root");
    }

    /**
     * A component that makes a new exchange per use, with the same group name, on the same store: the
     * second instance must not answer from the first one's keys (it would if both started at round 0).
     */
    @Test
    void aNewInstanceForTheSameGroupDoesNotMeetTheLastOnesKeys() {
        List<Uni<List<byte[]>>> firstCalls = new ArrayList<>();
        List<StoreExchange> first = group("reused", WORLD);
        for (int r = 0; r < WORLD; r++) {
            firstCalls.add(first.get(r).allGather(bytes("a" + r), AWAIT));
        }
        awaitAll(firstCalls).forEach(gathered -> assertThat(texts(gathered)).containsExactly("a0", "a1", "a2", "a3"));

        List<StoreExchange> second = group("reused", WORLD);
        CompletableFuture<List<byte[]>> early = second.get(0).allGather(bytes("b0"), AWAIT).subscribeAsCompletionStage();
        StoreTestSupport.awaitPendingWaits(server, 1); // rank 0 waits for the others instead of reading a1..a3
        assertThat(early).isNotDone();
        List<Uni<List<byte[]>>> rest = new ArrayList<>();
        for (int r = 1; r < WORLD; r++) {
            rest.add(second.get(r).allGather(bytes("b" + r), AWAIT));
        }
        awaitAll(rest).forEach(gathered -> assertThat(texts(gathered)).containsExactly("b0", "b1", "b2", "b3"));
        assertThat(texts(early.join())).containsExactly("b0", "b1", "b2", "b3");
    }

    @Test
    void argumentsAreValidatedWithTheirNames() {
        Store store = clients.get(0);
        assertThatThrownBy(() -> new StoreExchange(null, "g", 0, 1)).hasMessageContaining("store");
        assertThatThrownBy(() -> new StoreExchange(store, " ", 0, 1)).hasMessageContaining("groupName");
        assertThatThrownBy(() -> new StoreExchange(store, "a/b", 0, 1)).hasMessageContaining("groupName");
        assertThatThrownBy(() -> new StoreExchange(store, "g", 0, 0)).hasMessageContaining("worldSize");
        assertThatThrownBy(() -> new StoreExchange(store, "g", 4, 4)).hasMessageContaining("rank");
        assertThatThrownBy(() -> new StoreExchange(store, "g", -1, 4)).hasMessageContaining("rank");
        StoreExchange ok = new StoreExchange(store, "g", 0, 4);
        assertThatThrownBy(() -> ok.broadcast(4, null, AWAIT)).hasMessageContaining("root");
        assertThatThrownBy(() -> ok.broadcast(0, null, AWAIT)).hasMessageContaining("value");
        assertThatThrownBy(() -> ok.allGather(bytes("x"), Duration.ZERO)).hasMessageContaining("timeout");
        assertThatThrownBy(() -> ok.allGather(null, AWAIT)).hasMessageContaining("mine");
    }

    @Test
    void aSingleRankGroupNeedsNobodyElse() {
        StoreExchange solo = new StoreExchange(clients.get(0), "solo", 0, 1);
        assertThat(texts(solo.allGather(bytes("me"), AWAIT).await().atMost(AWAIT))).containsExactly("me");
        solo.barrier(AWAIT).await().atMost(AWAIT);
        assertThat(text(solo.broadcast(0, bytes("b"), AWAIT).await().atMost(AWAIT))).isEqualTo("b");
    }

    /** Large groups gather through one combined value; their own clients, all on the one server. */
    private List<StoreExchange> largeGroup(String name, int size, int members) {
        List<StoreExchange> ranks = new ArrayList<>();
        for (int r = 0; r < members; r++) {
            TcpStoreClient client = connect(vertx, server.port());
            clients.add(client);
            ranks.add(new StoreExchange(client, name, r, size));
        }
        return ranks;
    }

    @Test
    void aLargeGroupGathersEveryValueThroughOneCombinedValue() {
        int size = StoreExchange.COMBINE_FROM_WORLD_SIZE + 33;
        List<StoreExchange> ranks = largeGroup("large", size, size);
        for (int round = 0; round < 2; round++) {
            List<Uni<List<byte[]>>> calls = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                calls.add(ranks.get(r).allGather(bytes("v" + round + "-" + r), AWAIT));
            }
            List<List<byte[]>> results = awaitAll(calls);
            List<String> expected = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                expected.add("v" + round + "-" + r);
            }
            for (List<byte[]> result : results) {
                assertThat(texts(result)).containsExactlyElementsOf(expected);
            }
        }
    }

    @Test
    void aLargeGroupNamesItsMissingRankOnEveryOtherRank() {
        int size = StoreExchange.COMBINE_FROM_WORLD_SIZE;
        List<StoreExchange> present = largeGroup("large-missing", size, size - 1); // the last rank never comes
        List<java.util.concurrent.CompletableFuture<List<byte[]>>> calls = new ArrayList<>();
        for (StoreExchange rank : present) {
            calls.add(rank.allGather(bytes("x"), java.time.Duration.ofMillis(800)).subscribeAsCompletionStage());
        }
        for (java.util.concurrent.CompletableFuture<List<byte[]>> call : calls) {
            assertThatThrownBy(() -> call.get(30, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RendezvousTimeoutException.class)
                    .hasMessageContaining("rank(s) [" + (size - 1) + "]");
        }
    }
}
