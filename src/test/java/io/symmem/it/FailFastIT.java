package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A rank killed with SIGKILL, seen by the survivors: every one names it and ends (or, serving, turns
 * not ready) long before any deadline could. The deadlines are set to minutes here, so only liveness
 * can explain a fast, named failure; the bounds below only stop a broken build from hanging, the
 * detection figures come from `symmem chaos` (docs/reliability.md).
 */
class FailFastIT {
    private static final Map<String, String> LONG_DEADLINES = Map.of("SYMMEM_TIMEOUT_COLLECTIVE", "300s",
            "SYMMEM_TIMEOUT_BARRIER", "300s", "SYMMEM_TIMEOUT_RENDEZVOUS", "300s", "SYMMEM_TIMEOUT_STORE", "300s");
    private final RankHttp http = new RankHttp();

    private static Map<String, String> env(int rank, int world, int store, int httpBase) {
        return env(rank, world, store, httpBase, 0);
    }

    private static Map<String, String> env(int rank, int world, int store, int httpBase, int managementBase) {
        Map<String, String> env = new HashMap<>(LONG_DEADLINES);
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(world));
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(store));
        env.put("SYMMEM_HTTP_PORT", Integer.toString(httpBase));
        env.put("SYMMEM_MANAGEMENT_PORT", Integer.toString(managementBase));
        env.put("SYMMEM_BACKEND", "host");
        return env;
    }

    private static List<RankProcess> startWorld(int world, String... command) throws Exception {
        int store = Ports.free();
        int httpBase = Ports.freeBlock(world);
        List<RankProcess> ranks = new ArrayList<>();
        for (int r = 0; r < world; r++) {
            ranks.add(RankProcess.start("rank" + r, env(r, world, store, httpBase), command));
        }
        return ranks;
    }

    private static void assertSurvivorsNameTheDeadRank(List<RankProcess> ranks, int dead) throws Exception {
        for (int r = 0; r < ranks.size(); r++) {
            if (r == dead) {
                continue;
            }
            RankProcess p = ranks.get(r);
            assertThat(p.exitCode(60)).as(p.output()).isEqualTo(1);
            assertThat(p.output()).as(p.output()).contains("CHAOS-DETECTED").containsPattern("rank " + r + " FAILED: .*rank "
                    + dead + " is gone");
        }
    }

    @Test
    void aRankKilledInACollectiveIsNamedByEverySurvivor() throws Exception {
        List<RankProcess> ranks = startWorld(3, "chaos-rank", "--phase", "collective", "--size", "4MiB");
        try {
            for (RankProcess p : ranks) {
                p.awaitOutput("CHAOS-PHASE collective", 120);
            }
            ranks.get(1).kill();
            assertSurvivorsNameTheDeadRank(ranks, 1);
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void killingTheRankThatHostsTheStoreInABarrierIsNamedByEverySurvivor() throws Exception {
        List<RankProcess> ranks = startWorld(3, "chaos-rank", "--phase", "barrier");
        try {
            for (RankProcess p : ranks) {
                p.awaitOutput("CHAOS-PHASE barrier", 120);
            }
            ranks.get(0).kill();
            assertSurvivorsNameTheDeadRank(ranks, 0);
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void aServingWorldTurnsNotReadyNamingTheDeadRankWhileTheSurvivorsStayAlive() throws Exception {
        int store = Ports.free();
        int httpBase = Ports.freeBlock(3);
        int health = Ports.freeBlock(3);
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                ranks.add(RankProcess.start("serve" + r, env(r, 3, store, httpBase, health), "serve"));
            }
            for (int r = 0; r < 3; r++) {
                http.await(health + r, "/q/health/ready", 200, "UP", 120);
            }
            ranks.get(2).kill();
            for (int r = 0; r < 2; r++) {
                HttpResponse<String> ready = http.await(health + r, "/q/health/ready", 503, "\"ranksGone\": \"[2]\"", 30);
                // Not ready, naming the dead rank, while it forms the world again for when rank 2 comes back.
                assertThat(ready.body()).contains("\"state\": \"LOST\"").contains("rank 2 is gone").contains("\"reforming\": true");
                assertThat(http.get(health + r, "/q/health/live").statusCode()).isEqualTo(200);
                assertThat(ranks.get(r).isAlive()).isTrue();
            }
            ranks.get(0).kill(); // the store host: rank 1, waiting for the world to form again, names it too
            http.await(health + 1, "/q/health/ready", 503, "\"ranksGone\": \"[0, 2]\"", 30);
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void theChaosCommandKillsAndReports() throws Exception {
        try (RankProcess chaos = RankProcess.start("chaos", Map.of("SYMMEM_BACKEND", "host"), "chaos", "--ranks", "3",
                "--rounds", "2", "--phases", "store,idle", "--seed", "42")) {
            int code = chaos.exitCode(240);
            assertThat(chaos.output()).as(chaos.output()).contains("chaos: PASS").containsPattern("round +1: (store|idle)")
                    .containsPattern("round +2: (store|idle)").contains("detected").contains("named");
            assertThat(code).as(chaos.output()).isZero();
        }
    }
}
