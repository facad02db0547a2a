package io.symmem.liveness;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.LiveKeys;
import io.symmem.store.PrefixStore;
import io.symmem.store.Store;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Liveness agents of a small world against a real store server on loopback: rank 0 hosts the store
 * (its agent uses the in-process store), the other ranks connect over TCP. Bounds are generous: they
 * only stop a broken test from hanging; the figures live in `symmem chaos`.
 */
class LivenessAgentTest {
    private static final Duration AWAIT = Duration.ofSeconds(10);
    private static final Duration STORE_TIMEOUT = Duration.ofSeconds(5);
    private static Vertx vertx;
    private StoreServer server;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stopVertx() {
        vertx.close().toCompletionStage().toCompletableFuture().join();
    }

    @BeforeEach
    void startServer() {
        server = new StoreServer(vertx, "127.0.0.1", 0);
        server.start().await().atMost(AWAIT);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        server.close();
    }

    /** One rank: its liveness, its agent and (off rank 0) its two connections. */
    private record Rank(Liveness liveness, LivenessAgent agent, TcpStoreClient events, TcpStoreClient probe,
            List<LiveKeys.WorldRecord> heard) {
    }

    /** The world log as the store holds it (holes left out). */
    private List<LiveKeys.WorldRecord> log() {
        Store local = new PrefixStore("symmem/run/t", server.localStore());
        long n = local.add(LiveKeys.EVENTS, 0).await().atMost(AWAIT);
        List<LiveKeys.WorldRecord> out = new ArrayList<>();
        for (long i = 1; i <= n; i++) {
            if (local.check(List.of(LiveKeys.event(i))).await().atMost(AWAIT)) {
                out.add(LiveKeys.WorldRecord.decode(local.get(LiveKeys.event(i), AWAIT).await().atMost(AWAIT)));
            }
        }
        return out;
    }

    private boolean logged(int rank, LiveKeys.Kind kind) {
        return log().stream().anyMatch(r -> r.rank() == rank && r.kind() == kind);
    }

    private Rank rank(int rank, int world, Duration bound) {
        Liveness liveness = new Liveness(rank);
        Store events;
        Store probe;
        TcpStoreClient eventsClient = null;
        TcpStoreClient probeClient = null;
        if (rank == 0) {
            events = new PrefixStore("symmem/run/t", server.localStore());
            probe = events;
        } else {
            eventsClient = connect();
            probeClient = connect();
            events = new PrefixStore("symmem/run/t", eventsClient);
            probe = new PrefixStore("symmem/run/t", probeClient);
        }
        List<LiveKeys.WorldRecord> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        LivenessAgent agent = new LivenessAgent(liveness, events, probe, world, bound, "127.0.0.1:" + server.port(), true, heard::add);
        if (eventsClient != null) {
            eventsClient.whenConnectionLost(agent::connectionLost);
            toClose.add(eventsClient);
            toClose.add(probeClient);
        }
        toClose.add(agent);
        agent.start(STORE_TIMEOUT);
        return new Rank(liveness, agent, eventsClient, probeClient, heard);
    }

    private TcpStoreClient connect() {
        return TcpStoreClient.connect(vertx, "127.0.0.1", server.port(), STORE_TIMEOUT, TcpStoreClient.Options.forSymmemServer())
                .await().atMost(AWAIT);
    }

    private static void eventually(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    @Test
    void aRankWhoseConnectionCloses_IsNamedByEveryOtherRank() throws Exception {
        Duration bound = Duration.ofMinutes(5); // heartbeats cannot be what notices here
        Rank r0 = rank(0, 3, bound);
        Rank r1 = rank(1, 3, bound);
        Rank r2 = rank(2, 3, bound);
        List.of(r0, r1, r2).forEach(r -> r.agent().startMonitoring());

        r2.agent().close();
        r2.events().close(); // what the kernel does to a killed process's sockets

        eventually(() -> r0.liveness().failed() && r1.liveness().failed(), "ranks 0 and 1 learn that rank 2 is gone");
        for (Rank r : List.of(r0, r1)) {
            WorldFailure f = r.liveness().failure().orElseThrow();
            assertThat(f.ranks()).containsExactly(2);
            assertThat(f.reason()).contains("rank 2 is gone").contains("closed without leaving");
            assertThat(f.storeLost()).isFalse();
        }
    }

    @Test
    void aRankThatLeavesInOrderIsNoDeparture() throws Exception {
        Duration bound = Duration.ofMillis(600);
        Rank r0 = rank(0, 2, bound);
        Rank r1 = rank(1, 2, bound);
        List.of(r0, r1).forEach(r -> r.agent().startMonitoring());
        r1.agent().leave(STORE_TIMEOUT);
        r1.events().close();
        r1.probe().close();
        Thread.sleep(4 * bound.toMillis()); // longer than the heartbeat bound: a silent left rank must not count
        assertThat(r0.liveness().failure()).isEmpty();
        assertThat(logged(1, LiveKeys.Kind.LEFT)).as("the leave is logged").isTrue();
        assertThat(log()).noneMatch(r -> r.kind() == LiveKeys.Kind.GONE);
        assertThat(r0.heard()).contains(new LiveKeys.WorldRecord(1, LiveKeys.Kind.LEFT, "left in order"));
    }

    @Test
    void aRankThatStopsBeatingIsDeclaredGoneByRank0AndLearnsItItself() throws Exception {
        // Wide enough that a loaded CI machine never holds a beating rank's thread up this long.
        Duration bound = Duration.ofMillis(1500);
        Rank r0 = rank(0, 2, bound);
        Rank r1 = rank(1, 2, bound);
        List.of(r0, r1).forEach(r -> r.agent().startMonitoring());
        Thread.sleep(2 * bound.toMillis());
        assertThat(r0.liveness().failure()).as("beating ranks are not declared gone").isEmpty();

        // A hung process: its connection stays open, its beats stop (the timer of its agent is gone).
        r1.agent().close();

        eventually(() -> r0.liveness().failed(), "rank 0 declares rank 1 gone");
        assertThat(r0.liveness().failure().orElseThrow().reason()).contains("rank 1 is gone").contains("no heartbeat");
    }

    /**
     * A rank on a store that keeps member keys on leases (etcd) and hosts no rank: its member key is
     * set through {@code leases}, whose watch of removals never reports (a watch event still on its way).
     */
    private Rank leasedRank(int rank, int world, Duration bound) {
        Liveness liveness = new Liveness(rank);
        TcpStoreClient eventsClient = connect();
        TcpStoreClient probeClient = connect();
        Store events = new PrefixStore("symmem/run/t", eventsClient);
        Store probe = new PrefixStore("symmem/run/t", probeClient);
        LivenessAgent agent = new LivenessAgent(liveness, events, probe, world, bound, "127.0.0.1:" + server.port(), false);
        agent.useLeases(new LeasedMembers() {
            @Override
            public void hold(int r, Duration timeout) {
                events.set(LiveKeys.member(r), Integer.toString(r).getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                        .await().atMost(timeout);
            }

            @Override
            public AutoCloseable watch(java.util.function.IntConsumer removed, java.util.function.Consumer<Throwable> failed) {
                return () -> { };
            }

            @Override
            public void whenOwnLeaseLost(java.util.function.Consumer<String> listener) {
            }

            @Override
            public long ttlSeconds() {
                return 1;
            }
        });
        toClose.add(eventsClient);
        toClose.add(probeClient);
        toClose.add(agent);
        agent.start(STORE_TIMEOUT);
        return new Rank(liveness, agent, eventsClient, probeClient, List.of());
    }

    @Test
    void aRankWhoseLeaseExpiredIsDeclaredGoneWhenTheMonitorSeesItsKeyGoneBeforeTheWatchDoes() throws Exception {
        Duration bound = Duration.ofMillis(1500);
        Rank r0 = leasedRank(0, 2, bound);
        Rank r1 = leasedRank(1, 2, bound);
        List.of(r0, r1).forEach(r -> r.agent().startMonitoring());

        // Rank 1 dies: its beats stop and its lease expires, which removes its member key and publishes
        // nothing. The watch has not reported the removal, so the heartbeat monitor is first to look.
        r1.agent().close();
        new PrefixStore("symmem/run/t", server.localStore()).delete(LiveKeys.member(1)).await().atMost(AWAIT);

        eventually(() -> r0.liveness().failed(), "rank 0 declares rank 1 gone");
        WorldFailure f = r0.liveness().failure().orElseThrow();
        assertThat(f.ranks()).containsExactly(1);
        assertThat(f.reason()).contains("rank 1 is gone").contains("etcd lease expired");
    }

    @Test
    void losingTheStoreHostIsRank0Gone() throws Exception {
        Rank r1 = rank(1, 2, Duration.ofMinutes(5));
        server.close();
        eventually(() -> r1.liveness().failed(), "rank 1 learns that the store host is gone");
        WorldFailure f = r1.liveness().failure().orElseThrow();
        assertThat(f.ranks()).containsExactly(0);
        assertThat(f.storeLost()).isTrue();
        assertThat(f.reason()).contains("rank 0 is gone").contains("closed the connection");
    }

    @Test
    void aDepartureFromBeforeARankJoinedIsReportedWhenItJoins() throws Exception {
        Rank r2 = rank(2, 3, Duration.ofMinutes(5));
        r2.agent().close();
        r2.events().close();
        eventually(() -> logged(2, LiveKeys.Kind.GONE), "the departure is logged");
        Rank r1 = rank(1, 3, Duration.ofMinutes(5));
        assertThat(r1.liveness().failure()).hasValueSatisfying(f -> assertThat(f.ranks()).containsExactly(2));
    }

    @Test
    void everyRankHearsEveryJoinReadyAndLeaveOnceInLogOrder() throws Exception {
        Duration bound = Duration.ofMinutes(5);
        Rank r0 = rank(0, 3, bound);
        Rank r1 = rank(1, 3, bound);
        Rank r2 = rank(2, 3, bound);
        List.of(r0, r1, r2).forEach(r -> r.agent().publishReady());
        eventually(() -> log().size() == 6, "every rank logs that it is ready");
        r2.agent().leave(STORE_TIMEOUT);
        eventually(() -> List.of(r0, r1).stream().allMatch(r -> r.heard().size() == 7), "ranks 0 and 1 hear 3 joins, 3 readies, 1 leave");
        List<LiveKeys.WorldRecord> log = log();
        assertThat(log).hasSize(7);
        assertThat(r0.heard()).containsExactlyElementsOf(log);
        assertThat(r1.heard()).containsExactlyElementsOf(log);
        assertThat(log.subList(0, 3)).extracting(LiveKeys.WorldRecord::kind).containsOnly(LiveKeys.Kind.JOINED);
        assertThat(log.get(6)).isEqualTo(new LiveKeys.WorldRecord(2, LiveKeys.Kind.LEFT, "left in order"));
        assertThat(r0.liveness().failure()).isEmpty();
    }

    @Test
    void aNumberClaimedByAPublisherThatDiedIsSkippedAndTheDepartureAfterItStillArrives() throws Exception {
        Duration bound = Duration.ofMillis(300); // the watch waits 2 s before it looks for a hole
        Rank r1 = rank(1, 3, bound);
        Store local = new PrefixStore("symmem/run/t", server.localStore());
        long hole = local.add(LiveKeys.EVENTS, 1).await().atMost(AWAIT); // claimed, never set: its publisher died
        long n = local.add(LiveKeys.EVENTS, 1).await().atMost(AWAIT);
        local.set(LiveKeys.event(n), LiveKeys.WorldRecord.gone(2, "killed in the test").encode()).await().atMost(AWAIT);

        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!r1.liveness().failed()) {
            assertThat(System.nanoTime()).as("rank 1 skips hole %d and learns of the departure after it", hole).isLessThan(deadline);
            Thread.sleep(20);
        }
        assertThat(r1.liveness().failure().orElseThrow().ranks()).containsExactly(2);
        // A rank that joins now starts its watch at the hole and gets past it the same way.
        Rank late = rank(0, 3, bound);
        deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!late.liveness().failed()) {
            assertThat(System.nanoTime()).as("a rank joining after the hole learns of the departure").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
