package io.symmem.store.server;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.connectPipelined;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.LiveKeys;
import io.symmem.store.StoreServerTest;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.client.TcpStoreClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Ephemeral member keys: a connection that closes without deleting its key publishes a departure. */
class StoreMembersTest extends StoreServerTest {
    private static final byte[] RANK_2 = "2".getBytes(StandardCharsets.US_ASCII);

    @Test
    void aMemberWhoseConnectionClosesIsDeletedAndItsDepartureWakesAWaitingRank() {
        LocalStore local = server.localStore();
        TcpStoreClient watcher = connectPipelined(vertx, server.port());
        TcpStoreClient member = connectPipelined(vertx, server.port());
        try {
            member.set("run/a/" + LiveKeys.member(2), RANK_2).await().atMost(AWAIT);
            member.ping().await().atMost(AWAIT);
            var departure = watcher.get("run/a/" + LiveKeys.event(1), Duration.ofSeconds(30))
                    .subscribeAsCompletionStage();
            StoreTestSupport.awaitPendingWaits(server, 1);

            member.close();

            byte[] value = departure.toCompletableFuture().orTimeout(10, java.util.concurrent.TimeUnit.SECONDS).join();
            assertThat(LiveKeys.WorldRecord.decode(value).rank()).isEqualTo(2);
            assertThat(LiveKeys.WorldRecord.decode(value).kind()).isEqualTo(LiveKeys.Kind.GONE);
            assertThat(LiveKeys.WorldRecord.decode(value).detail()).contains("connection");
            assertThat(local.check(List.of("run/a/" + LiveKeys.member(2))).await().atMost(AWAIT)).isFalse();
            assertThat(new String(local.get("run/a/" + LiveKeys.EVENTS, AWAIT).await().atMost(AWAIT),
                    StandardCharsets.US_ASCII)).isEqualTo("1");
        } finally {
            watcher.close();
        }
    }

    @Test
    void aMemberThatDeletesItsKeyBeforeClosingLeavesWithoutADeparture() {
        LocalStore local = server.localStore();
        TcpStoreClient member = connectPipelined(vertx, server.port());
        member.set(LiveKeys.member(1), "1".getBytes(StandardCharsets.US_ASCII)).await().atMost(AWAIT);
        member.ping().await().atMost(AWAIT); // the set has no answer: the server has it once this is answered
        TcpStoreClient other = connectPipelined(vertx, server.port());
        try {
            // Deleted on another connection (as a leaving rank does, its own connection holds a WAIT).
            assertThat(other.delete(LiveKeys.member(1)).await().atMost(AWAIT)).isTrue();
            member.close();
            awaitOpenConnections(1);
            assertThat(local.check(List.of(LiveKeys.EVENTS)).await().atMost(AWAIT)).isFalse();
        } finally {
            other.close();
        }
    }

    @Test
    void aKeySetAgainByAnotherConnectionBelongsToThatConnection() {
        LocalStore local = server.localStore();
        TcpStoreClient first = connectPipelined(vertx, server.port());
        TcpStoreClient second = connectPipelined(vertx, server.port());
        first.set(LiveKeys.member(3), "3".getBytes(StandardCharsets.US_ASCII)).await().atMost(AWAIT);
        first.ping().await().atMost(AWAIT);
        second.set(LiveKeys.member(3), "3".getBytes(StandardCharsets.US_ASCII)).await().atMost(AWAIT);
        second.ping().await().atMost(AWAIT);

        first.close();
        awaitOpenConnections(1);
        assertThat(local.check(List.of(LiveKeys.EVENTS)).await().atMost(AWAIT)).as("the first connection no longer owns it")
                .isFalse();

        second.close();
        byte[] value = local.get(LiveKeys.event(1), AWAIT).await().atMost(AWAIT);
        assertThat(LiveKeys.WorldRecord.decode(value).rank()).isEqualTo(3);
    }

    @Test
    void onlyKeysEndingInADecimalRankAreMemberKeys() {
        assertThat(LiveKeys.memberScope("symmem/live/member/12")).isEqualTo("");
        assertThat(LiveKeys.memberScope("symmem/run/x/symmem/live/member/0")).isEqualTo("symmem/run/x/");
        assertThat(LiveKeys.memberScope("symmem/live/member/")).isNull();
        assertThat(LiveKeys.memberScope("symmem/live/member/1a")).isNull();
        assertThat(LiveKeys.memberScope("symmem/live/member/1234567890")).as("longer than any rank").isNull();
        assertThat(LiveKeys.memberScope("symmem/live/beat/1")).isNull();
    }

    /** Polls until the server holds {@code open} connections: the others' close has been handled. */
    private void awaitOpenConnections(int open) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (server.stats().await().atMost(AWAIT).openConnections() != open) {
            assertThat(System.nanoTime()).as("server still holds more than " + open + " connections").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
