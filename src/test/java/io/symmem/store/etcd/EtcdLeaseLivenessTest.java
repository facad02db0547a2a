package io.symmem.store.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.liveness.LeaseMembers;
import io.symmem.liveness.Liveness;
import io.symmem.liveness.LivenessAgent;
import io.symmem.liveness.WorldFailure;
import io.symmem.store.StoreLimits;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Rank liveness through etcd leases: two ranks' liveness agents on one cluster; one rank dies (its
 * client stops renewing its lease without revoking it, as a killed process). The heartbeat monitor
 * is never started here and its bound is long, so only the lease path can tell the survivor, and no
 * collective runs: the survivor's world must fail naming the lost rank within the lease's TTL.
 */
@Timeout(60)
class EtcdLeaseLivenessTest {

    private static EtcdCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = EtcdCluster.startOrSkip(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aRankWhoseLeaseExpiresFailsTheSurvivorsWorld() throws Exception {
        EtcdTarget target = EtcdTarget.parse(cluster.target("liveness/job-1"));
        Duration ttl = Duration.ofSeconds(2);
        Duration heartbeatBound = Duration.ofMinutes(5); // heartbeats cannot be what notices
        EtcdStore store0 = EtcdStore.connect(target, Duration.ofSeconds(10), StoreLimits.defaults(), ttl);
        EtcdStore store1 = EtcdStore.connect(target, Duration.ofSeconds(10), StoreLimits.defaults(), ttl);
        Liveness world0 = new Liveness(0);
        Liveness world1 = new Liveness(1);
        CompletableFuture<WorldFailure> failed0 = new CompletableFuture<>();
        world0.whenFailed(failed0::complete);
        LivenessAgent agent0 = new LivenessAgent(world0, store0, store0, 2, heartbeatBound, store0.describe(), false);
        LivenessAgent agent1 = new LivenessAgent(world1, store1, store1, 2, heartbeatBound, store1.describe(), false);
        agent0.useLeases(new LeaseMembers(store0, ""));
        agent1.useLeases(new LeaseMembers(store1, ""));
        try {
            agent0.start(Duration.ofSeconds(10));
            agent1.start(Duration.ofSeconds(10));
            assertThat(store0.check(java.util.List.of("symmem/live/member/0", "symmem/live/member/1")).await().atMost(Duration.ofSeconds(10)))
                    .isTrue();

            long killed = System.nanoTime();
            agent1.close();
            store1.closeAsIfKilled();

            // etcd expires a lease up to about a second after its TTL; the watch then reports at once.
            WorldFailure failure = failed0.get(ttl.toSeconds() + 10, TimeUnit.SECONDS);
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - killed);
            assertThat(failure.ranks()).containsExactly(1);
            assertThat(failure.reason()).contains("rank 1 is gone").contains("etcd lease expired");
            assertThat(seconds).isLessThan(ttl.toSeconds() + 5);
            assertThat(store0.check(java.util.List.of("symmem/live/member/1")).await().atMost(Duration.ofSeconds(10))).isFalse();
        } finally {
            agent0.close();
            store0.close();
        }
    }
}
