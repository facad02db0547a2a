package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static io.symmem.store.StoreTestSupport.startServer;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A round that one member abandons (its deadline passed before its peers came) must never pair with a
 * later call of a peer: every later call of the group fails on every member, naming the round where it
 * went out of step, and none answers with a value of another round. Each rank has its own client.
 */
@Timeout(60)
class StoreExchangeOutOfStepTest extends VertxTest {
    private static final Duration SHORT = Duration.ofMillis(300);

    private StoreServer server;
    private final List<TcpStoreClient> clients = new ArrayList<>();

    @BeforeEach
    void start() {
        server = startServer(vertx);
        for (int r = 0; r < 4; r++) {
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

    /** Rank 0 alone in round 0 until its deadline: the 504, through the exchange. */
    private static void rank0TimesOutAlone(List<StoreExchange> g) {
        assertThatThrownBy(() -> g.get(0).allGather(bytes("alone"), SHORT).await().atMost(AWAIT))
                .isInstanceOf(RendezvousTimeoutException.class);
    }

    /** Every rank calls at once, {@code calls} times; every outcome must be a refusal naming round 0. */
    private static void everyLaterCallIsRefusedOnEveryRank(List<StoreExchange> g, int calls,
            java.util.function.BiFunction<StoreExchange, Integer, Uni<?>> call) {
        for (int i = 1; i <= calls; i++) {
            List<CompletableFuture<?>> made = new ArrayList<>();
            for (int r = 0; r < g.size(); r++) {
                made.add(call.apply(g.get(r), i).subscribeAsCompletionStage());
            }
            for (int r = 0; r < made.size(); r++) {
                CompletableFuture<?> one = made.get(r);
                int rank = r;
                int index = i;
                assertThatThrownBy(one::join).as("call %d on rank %d must be refused, not answered", index, rank)
                        .isInstanceOf(CompletionException.class).cause()
                        .isInstanceOf(ExchangeOutOfStepException.class)
                        .hasMessageContaining("out of step since round 0")
                        .hasMessageContaining("make a new group")
                        .satisfies(e -> assertThat(((ExchangeOutOfStepException) e).sinceRound()).isZero());
            }
        }
    }

    @Test
    void afterOneMemberTimedOutNoAllGatherAnswersWithItsStaleValue() {
        List<StoreExchange> g = group("late", 2);
        rank0TimesOutAlone(g);
        // The table: then both ranks gather four times together; today rank 1 got rank 0's
        // stale value each time, with success.
        everyLaterCallIsRefusedOnEveryRank(g, 4, (x, i) -> x.allGather(bytes("v" + i), AWAIT));
        assertThat(g.get(0).outOfStepSince()).hasValue(0);
        assertThat(g.get(1).outOfStepSince()).hasValue(0);
    }

    @Test
    void afterOneMemberTimedOutNoBarrierOrBroadcastPairsWithTheWrongRound() {
        List<StoreExchange> barriers = group("late-barrier", 2);
        rank0TimesOutAlone(barriers);
        everyLaterCallIsRefusedOnEveryRank(barriers, 3, (x, i) -> x.barrier(AWAIT));

        List<StoreExchange> broadcasts = group("late-broadcast", 2);
        rank0TimesOutAlone(broadcasts);
        everyLaterCallIsRefusedOnEveryRank(broadcasts, 3, (x, i) -> x.broadcast(0, x.rank() == 0 ? bytes("b" + i) : null, AWAIT));
    }

    @Test
    void aBroadcastRootLearnsThatAPeerGaveItsRoundUp() {
        List<StoreExchange> g = group("late-root", 2);
        assertThatThrownBy(() -> g.get(1).broadcast(0, null, SHORT).await().atMost(AWAIT))
                .isInstanceOf(RendezvousTimeoutException.class);
        // The root comes after rank 1 gave up: it must not answer as if its value had reached rank 1.
        everyLaterCallIsRefusedOnEveryRank(g, 3, (x, i) -> x.broadcast(0, x.rank() == 0 ? bytes("r" + i) : null, AWAIT));
    }

    @Test
    void aPeerThatComesAfterTheOtherGaveUpIsToldAtOnce() {
        List<StoreExchange> g = group("waiting", 2);
        // Rank 1 is one round ahead (its round 0 paired with nothing), so its round 1 waits for rank 0's.
        assertThatThrownBy(() -> g.get(1).barrier(SHORT).await().atMost(AWAIT)).isInstanceOf(RendezvousTimeoutException.class);
        CompletableFuture<Void> rank0 = g.get(0).barrier(Duration.ofSeconds(20)).subscribeAsCompletionStage();
        long start = System.nanoTime();
        assertThatThrownBy(rank0::join).cause().isInstanceOf(ExchangeOutOfStepException.class)
                .hasMessageContaining("out of step since round 0 (group rank 1 gave up round 0");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("told by the mark, not by its own deadline")
                .isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void membersThatPairDifferentCallsFailAlikeNamingBothAndTheNextCallPairs() {
        List<StoreExchange> g = group("crossed", 2);
        CompletableFuture<Void> barrier = g.get(0).barrier(AWAIT).subscribeAsCompletionStage();
        CompletableFuture<List<byte[]>> gather = g.get(1).allGather(bytes("x"), AWAIT).subscribeAsCompletionStage();
        for (CompletableFuture<?> call : List.of(barrier, gather)) {
            assertThatThrownBy(call::join).cause().isInstanceOf(ExchangeMismatchException.class)
                    .hasMessageContaining("called 'barrier'").hasMessageContaining("called 'all_gather'");
        }
        // Both saw both calls: the group is still in step, and the next round pairs right.
        List<CompletableFuture<List<byte[]>>> next = List.of(g.get(0).allGather(bytes("a"), AWAIT).subscribeAsCompletionStage(),
                g.get(1).allGather(bytes("b"), AWAIT).subscribeAsCompletionStage());
        next.forEach(n -> assertThat(n.join().stream().map(StoreTestSupport::text).toList()).containsExactly("a", "b"));
    }

    @Test
    void aBroadcastReaderThatMeetsAnotherCallPutsTheGroupOutOfStep() {
        List<StoreExchange> g = group("crossed-broadcast", 2);
        CompletableFuture<List<byte[]>> gather = g.get(0).allGather(bytes("x"), AWAIT).subscribeAsCompletionStage();
        CompletableFuture<byte[]> reader = g.get(1).broadcast(0, null, AWAIT).subscribeAsCompletionStage();
        assertThatThrownBy(reader::join).cause().isInstanceOf(ExchangeOutOfStepException.class)
                .hasMessageContaining("called 'broadcast from rank 0'").hasMessageContaining("called 'all_gather'");
        // Rank 0's gather waited for rank 1's key, which now holds its mark.
        assertThatThrownBy(gather::join).cause().isInstanceOf(ExchangeOutOfStepException.class)
                .hasMessageContaining("out of step since round 0");
        everyLaterCallIsRefusedOnEveryRank(g, 2, (x, i) -> x.allGather(bytes("y"), AWAIT));
    }

    @Test
    void labelledGathersPairOnlyWithTheSameLabel() {
        List<StoreExchange> g = group("labels", 2);
        IntFunction<CompletableFuture<List<byte[]>>> reduce = r -> g.get(r).allGather("all-reduce", bytes("r" + r), AWAIT)
                .subscribeAsCompletionStage();
        List<CompletableFuture<List<byte[]>>> calls = List.of(reduce.apply(0), reduce.apply(1));
        for (CompletableFuture<List<byte[]>> call : calls) {
            assertThat(call.join().stream().map(StoreTestSupport::text).toList()).containsExactly("r0", "r1");
        }
        assertThat(g.get(0).outOfStepSince()).isEmpty();
    }

    @Test
    void aGroupThatStaysInStepKeepsAnsweringAfterManyRounds() {
        List<StoreExchange> g = group("steady", 4);
        for (int i = 0; i < 20; i++) {
            List<CompletableFuture<List<byte[]>>> calls = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                calls.add(g.get(r).allGather(bytes(i + ":" + r), AWAIT).subscribeAsCompletionStage());
            }
            for (CompletableFuture<List<byte[]>> call : calls) {
                assertThat(call.join().stream().map(StoreTestSupport::text).toList())
                        .containsExactly(i + ":0", i + ":1", i + ":2", i + ":3");
            }
        }
        assertThat(text(g.get(2).broadcast(2, bytes("last"), AWAIT).await().atMost(AWAIT))).isEqualTo("last");
    }
}
