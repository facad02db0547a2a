package io.symmem.liveness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.RendezvousAbortedException;
import io.symmem.store.StoreExchange;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A rendezvous waiting for a dead rank ends when liveness says so, naming who is gone and who is missing. */
class GuardedStoreTest {
    private static Vertx vertx;
    private static StoreServer server;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        server = new StoreServer(vertx, "127.0.0.1", 0);
        server.start().await().atMost(Duration.ofSeconds(5));
    }

    @AfterAll
    static void stop() {
        server.close();
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @Test
    void anAllGatherWaitingForADeadRankEndsAtOnceNamingItAndTheMissingRanks() throws Exception {
        Liveness liveness = new Liveness(0);
        GuardedStore store = new GuardedStore(server.localStore(), liveness);
        Duration longDeadline = Duration.ofMinutes(5);
        CompletableFuture<List<byte[]>> r0 = new StoreExchange(store, "g", 0, 3).allGather(new byte[] {0}, longDeadline)
                .subscribeAsCompletionStage().toCompletableFuture();
        CompletableFuture<List<byte[]>> r1 = new StoreExchange(store, "g", 1, 3).allGather(new byte[] {1}, longDeadline)
                .subscribeAsCompletionStage().toCompletableFuture();
        Thread.sleep(200);
        assertThat(r0).isNotDone();

        liveness.fail(Set.of(2), "rank 2 is gone (test)");

        for (CompletableFuture<List<byte[]>> r : List.of(r0, r1)) {
            assertThatThrownBy(() -> r.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(RendezvousAbortedException.class)
                    .hasMessageContaining("all_gather of group 'g'").hasMessageContaining("aborted: rank 2 is gone (test)")
                    .hasMessageContaining("no value from rank(s) [2] yet")
                    .satisfies(e -> assertThat(((RendezvousAbortedException) e).missingRanks()).containsExactly(2));
        }
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void whileOnlyAPeerIsGoneTheStoreStillServesOperationsThatDoNotWait() {
        Liveness liveness = new Liveness(0);
        GuardedStore store = new GuardedStore(server.localStore(), liveness);
        liveness.fail(Set.of(1), "rank 1 is gone");
        store.set("k", new byte[] {7}).await().atMost(Duration.ofSeconds(5));
        assertThat(store.add("n", 2).await().atMost(Duration.ofSeconds(5))).isEqualTo(2);
        assertThatThrownBy(() -> store.get("k", Duration.ofSeconds(5)).await().atMost(Duration.ofSeconds(5)))
                .isInstanceOf(PeerLostException.class).hasMessageContaining("store wait for key 'k': aborted: rank 1 is gone");
    }
}
