package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Long polls over HTTP on a real two-rank world: a caller that goes away leaves no wait in the store,
 * a wait holds up no other request of its rank, and one caller's bad request breaks no other's. Rank 0
 * hosts the store (its waits are in-process); rank 1 reaches it over TCP. The store's pending waits are
 * read from rank 0's /v1/store/stats (each rank's liveness keeps one of its own, hence the baselines).
 */
class HttpWaitsIT {
    private static final String BYTES = "application/octet-stream";
    private static TwoRankWorld world;

    @BeforeAll
    static void startWorld() throws Exception {
        world = TwoRankWorld.start("waits");
    }

    @AfterAll
    static void stopWorld() {
        if (world != null) {
            world.close();
        }
    }

    private static String longPoll(String key) {
        return RawHttp.request("GET", "/v1/store/keys/" + key + "?wait=60s", "HTTP/1.1", Map.of(), null);
    }

    private static String add(String key) {
        return RawHttp.request("POST", "/v1/store/keys/" + key + "/add", "HTTP/1.1", Map.of(), "");
    }

    private static RawHttp.Reply put(int rank, String key, String value) throws Exception {
        return RawHttp.exchange(world.port(rank), "PUT", "/v1/store/keys/" + key, Map.of("Content-Type", BYTES), value);
    }

    private static RawHttp.Reply get(int rank, String key) throws Exception {
        return RawHttp.exchange(world.port(rank), "GET", "/v1/store/keys/" + key, Map.of(), null);
    }

    /** Opens {@code count} long polls on {@code rank}, waits until the store holds them all, then hangs up on each. */
    private static void abandonLongPolls(int rank, int count) throws Exception {
        int baseline = world.pendingWaits();
        List<Socket> polls = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                polls.add(RawHttp.send(world.port(rank), longPoll("abandoned/rank" + rank + "/" + i)));
            }
            world.awaitPendingWaits(baseline + count, "the long polls on rank " + rank + " never all reached the store");
        } finally {
            for (Socket poll : polls) {
                poll.close();
            }
        }
        world.awaitPendingWaits(baseline, count + " abandoned long polls on rank " + rank + " left waits in the store");
    }

    /**
     * A 204 to a PUT means the store has the value: rank 1 confirms its set with a PING on the same
     * connection (a set has no answer, and the kernel may deliver another socket's request first), so a
     * plain GET on rank 0 finds the key at once.
     */
    @Test
    void aKeyPutOnRank1IsFoundAtOnceByAGetOnRank0() throws Exception {
        int puts = 50;
        long pings = world.opsServed("PING");
        for (int i = 0; i < puts; i++) {
            assertThat(put(1, "put-then-get/" + i, "v" + i).status()).isEqualTo(204);
            RawHttp.Reply got = get(0, "put-then-get/" + i);
            assertThat(got.status()).as("GET on rank 0 right after the PUT on rank 1, round %d", i).isEqualTo(200);
            assertThat(got.body()).isEqualTo("v" + i);
        }
        assertThat(world.opsServed("PING")).as("PINGs served while rank 1 answered %d PUTs", puts).isGreaterThanOrEqualTo(pings + puts);
    }

    @Test
    void abandonedLongPollsOnRank0LeaveNoWaitInTheStore() throws Exception {
        abandonLongPolls(0, 50);
    }

    @Test
    void abandonedLongPollsOnRank1LeaveNoWaitInTheStoreAndHoldUpNothing() throws Exception {
        abandonLongPolls(1, 20);
        // The next requests of rank 1 are answered (before: held until the abandoned polls' keys appeared).
        assertThat(RawHttp.exchange(world.port(1), add("after-abandoned")).status()).isEqualTo(200);
        assertThat(put(1, "after-abandoned-value", "v").status()).isEqualTo(204);
        assertThat(get(1, "after-abandoned-value").body()).isEqualTo("v");
    }

    @Test
    void anAddWhoseCallerGaveUpIsNeverAppliedLater() throws Exception {
        int baseline = world.pendingWaits();
        try (Socket poll = RawHttp.send(world.port(1), longPoll("gate"))) {
            world.awaitPendingWaits(baseline + 1, "the long poll never reached the store");
            // A caller with little patience: before, this ADD queued behind the poll's WAIT, the caller
            // gave up, and the ADD was applied once "gate" appeared.
            Optional<RawHttp.Reply> added = RawHttp.exchangeOrGiveUp(world.port(1), add("impatient"), Duration.ofSeconds(5));
            assertThat(put(0, "gate", "open").status()).isEqualTo(204);
            assertThat(RawHttp.read(poll).body()).isEqualTo("open");
            // The poll's answer came after anything held behind its wait was applied.
            RawHttp.Reply counter = get(0, "impatient");
            long acknowledged = added.filter(reply -> reply.status() == 200).isPresent() ? 1 : 0;
            long applied = counter.status() == 200 ? Long.parseLong(counter.body()) : 0;
            assertThat(applied).as("ADDs applied vs acknowledged to their caller").isEqualTo(acknowledged);
            assertThat(added).as("the ADD is answered while another caller's long poll runs").isPresent();
        }
    }

    @Test
    void anAddOnAValueThatIsNoIntegerIsRefusedOnRank1AndAnotherCallersLongPollLivesOn() throws Exception {
        int baseline = world.pendingWaits();
        try (Socket poll = RawHttp.send(world.port(1), longPoll("survivor"))) {
            world.awaitPendingWaits(baseline + 1, "the long poll never reached the store");
            assertThat(put(1, "words", "not a number").status()).isEqualTo(204);

            RawHttp.Reply refused = RawHttp.exchange(world.port(1), add("words"));

            assertThat(refused.status()).as(refused.body()).isEqualTo(400);
            assertThat(TwoRankWorld.json(refused.body()).get("key").asText()).isEqualTo("words");
            assertThat(TwoRankWorld.json(refused.body()).get("error").asText()).contains("not a decimal integer");
            assertThat(world.pendingWaits()).as("the other caller's wait is still in the store").isEqualTo(baseline + 1);
            assertThat(put(0, "survivor", "still here").status()).isEqualTo(204);
            RawHttp.Reply polled = RawHttp.read(poll);
            assertThat(polled.status()).isEqualTo(200);
            assertThat(polled.body()).isEqualTo("still here");
        }
        // Rank 1's link to the store was never lost, and it still serves.
        assertThat(RawHttp.exchange(world.port(1), add("words-count")).status()).isEqualTo(200);
        assertThat(world.output(1)).doesNotContain("connection to store").doesNotContain("dropping the connection");
    }
}
