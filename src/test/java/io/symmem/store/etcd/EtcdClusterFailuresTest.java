package io.symmem.store.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.options.GetOption;
import io.symmem.store.StoreException;
import io.symmem.store.StoreExchange;
import io.symmem.store.StoreTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The store on a three-member etcd cluster when members fail: a crash mid-rendezvous, a minority cut off. */
@Timeout(120)
class EtcdClusterFailuresTest {

    private static final Duration CALL = Duration.ofSeconds(30);
    private EtcdCluster cluster;
    private final List<EtcdStore> clients = new ArrayList<>();

    @BeforeEach
    void startCluster() throws Exception {
        cluster = EtcdCluster.startOrSkip(3);
    }

    @AfterEach
    void stop() {
        clients.forEach(EtcdStore::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    private EtcdStore connect(String target, Duration requestTimeout) {
        EtcdStore store = EtcdStore.connect(EtcdTarget.parse(target), requestTimeout);
        clients.add(store);
        return store;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * 64 ranks, each with its own client, all-gather through the store (the combining path of 64+
     * ranks: a set, an ADD to count arrivals, the last one publishing the combined value) and count
     * themselves with an ADD. The leader is killed once part of the ranks have arrived, the rest
     * arrive after. Every rank must get every rank's value in order, and the count must be exactly 64:
     * no write lost, no ADD applied twice by a retry.
     */
    @Test
    void theLeaderKilledInTheMiddleOfA64RankRendezvousLosesNothing() throws Exception {
        int world = 64;
        String target = cluster.target("rendezvous/job-64");
        List<EtcdStore> ranks = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            ranks.add(connect(target, CALL));
        }
        EtcdStore observer = connect(target, CALL);
        List<CompletableFuture<List<byte[]>>> gathered = new ArrayList<>();
        List<CompletableFuture<Long>> counted = new ArrayList<>();
        int early = 40;
        for (int r = 0; r < early; r++) {
            start(ranks.get(r), r, world, gathered, counted);
        }
        // Kill once part of the world has counted itself in: the rendezvous is under way.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (Long.parseLong(new String(observer.get("count", CALL).await().atMost(CALL), StandardCharsets.US_ASCII)) < 8) {
            assertThat(System.nanoTime()).as("8 ranks counted in within 30 s").isLessThan(deadline);
            Thread.sleep(5);
        }
        int leader = leader();
        cluster.kill(leader);
        for (int r = early; r < world; r++) {
            start(ranks.get(r), r, world, gathered, counted);
        }

        List<String> expected = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            expected.add("value of rank " + r);
        }
        List<String> failures = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            try {
                List<byte[]> values = gathered.get(r).get(90, TimeUnit.SECONDS);
                assertThat(values).as("rank %d's all-gather", r).extracting(v -> new String(v, StandardCharsets.UTF_8))
                        .containsExactlyElementsOf(expected);
            } catch (java.util.concurrent.ExecutionException e) {
                failures.add("rank " + r + ": " + e.getCause());
            }
        }
        assertThat(failures).as("ranks whose all-gather failed (member %d, the leader, was killed)", leader).isEmpty();
        List<Long> counts = new ArrayList<>();
        for (CompletableFuture<Long> count : counted) {
            counts.add(count.get(60, TimeUnit.SECONDS));
        }
        assertThat(counts).as("every ADD's answer, once each").containsExactlyInAnyOrderElementsOf(
                java.util.stream.LongStream.rangeClosed(1, world).boxed().toList());
        assertThat(new String(observer.get("count", CALL).await().atMost(CALL), StandardCharsets.US_ASCII)).isEqualTo("64");
    }

    private static void start(EtcdStore store, int rank, int world, List<CompletableFuture<List<byte[]>>> gathered,
            List<CompletableFuture<Long>> counted) {
        StoreExchange exchange = new StoreExchange(store, "world", rank, world);
        gathered.add(exchange.allGather(bytes("value of rank " + rank), Duration.ofSeconds(60)).subscribeAsCompletionStage());
        counted.add(store.add("count", 1).subscribeAsCompletionStage());
    }

    /** The index of the member that leads now, as the members themselves report it. */
    private int leader() throws Exception {
        List<EtcdCluster.Member> members = cluster.members();
        try (Client client = Client.builder().endpoints(members.get(0).clientUrl()).build()) {
            StatusResponse status = client.getMaintenanceClient().statusMember(members.get(0).clientUrl()).get(10, TimeUnit.SECONDS);
            for (int i = 0; i < members.size(); i++) {
                StatusResponse other = client.getMaintenanceClient().statusMember(members.get(i).clientUrl()).get(10, TimeUnit.SECONDS);
                if (other.getHeader().getMemberId() == status.getLeader()) {
                    return i;
                }
            }
        }
        throw new AssertionError("no member is the leader");
    }

    /**
     * Members 1 and 2 are cut off (paused: they answer nobody), leaving member 0 alone, a minority that
     * still holds the key and still answers a serializable read from its own copy. A client that reaches
     * only member 0 must get an error naming it, for reads and writes, never member 0's own copy: a
     * linearizable read needs the quorum, which is what keeps a partitioned member from serving a value
     * the majority may have changed. (On loopback a real partition cannot be made without network
     * privileges; a paused majority is what member 0 sees of one.) Once the others are back, the same
     * client answers again.
     */
    @Test
    void aMinorityMemberGivesAnErrorNotItsOwnCopy() throws Exception {
        EtcdStore everyone = connect(cluster.target("partition/job-1"), CALL);
        Duration shortCall = Duration.ofSeconds(3);
        EtcdStore onlyMember0 = connect(cluster.target("partition/job-1", 0), shortCall);
        everyone.set("k", bytes("value")).await().atMost(CALL);
        assertThat(new String(onlyMember0.get("k", shortCall).await().atMost(CALL), StandardCharsets.UTF_8)).isEqualTo("value");

        cluster.pause(1);
        cluster.pause(2);

        String member0 = cluster.members().get(0).endpoint();
        assertThat(localCopyOn(0)).as("member 0 still answers from its own copy when not asked for the quorum")
                .isEqualTo("value");
        assertThatThrownBy(() -> onlyMember0.get("k", shortCall).await().atMost(CALL))
                .isInstanceOf(StoreException.class).isNotInstanceOf(StoreTimeoutException.class)
                .hasMessageContaining(member0).hasMessageContaining("not answered within 3 s");
        assertThatThrownBy(() -> onlyMember0.set("w", bytes("maybe")).await().atMost(CALL))
                .isInstanceOf(StoreException.class).hasMessageContaining(member0).hasMessageContaining("not answered");
        assertThatThrownBy(() -> onlyMember0.add("n", 1).await().atMost(CALL))
                .isInstanceOf(StoreException.class).hasMessageContaining(member0);

        cluster.resume(1);
        cluster.resume(2);
        cluster.awaitHealthy(Duration.ofSeconds(30), 0, 1, 2);
        assertThat(new String(onlyMember0.get("k", CALL).await().atMost(CALL), StandardCharsets.UTF_8)).isEqualTo("value");
        onlyMember0.set("k", bytes("after")).await().atMost(CALL);
        assertThat(new String(everyone.get("k", CALL).await().atMost(CALL), StandardCharsets.UTF_8)).isEqualTo("after");
    }

    /** What member {@code index} alone holds for the store's key "k" (a serializable read: no quorum asked). */
    private String localCopyOn(int index) throws Exception {
        String url = cluster.members().get(index).clientUrl();
        try (Client client = Client.builder().endpoints(url).namespace(ByteSequence.from("partition/job-1/", StandardCharsets.UTF_8))
                .build()) {
            var kvs = client.getKVClient().get(ByteSequence.from("k/k", StandardCharsets.UTF_8),
                    GetOption.builder().withSerializable(true).build()).get(10, TimeUnit.SECONDS).getKvs();
            return kvs.isEmpty() ? null : kvs.get(0).getValue().toString(StandardCharsets.UTF_8);
        }
    }
}
