package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.etcd.EtcdCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real ranks (`serve`, separate processes started without the launcher) on a store on etcd
 * (SYMMEM_STORE, a three-member cluster on loopback): the world rendezvous, the HTTP store routes and a
 * barrier work unchanged; a rank killed outright is seen gone by the survivors, with no collective
 * running, within SYMMEM_TIMEOUT_LIVENESS (which is also the lease's TTL) and a few seconds.
 * Skipped, saying so, where etcd is not installed.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EtcdWorldIT {
    private static final int WORLD = 3;
    private static final String RANK_2_GONE = "{\"rank\":2,\"state\":\"GONE\"";
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final RankHttp rankHttp = new RankHttp();

    @Test
    void ranksMeetOnEtcdAndAKilledRankIsSeenGoneWithinSeconds() throws Exception {
        try (EtcdCluster cluster = EtcdCluster.startOrSkip(3)) {
            int base = Ports.freeBlock(WORLD);
            String target = cluster.target("world-it");
            List<RankProcess> ranks = new ArrayList<>();
            try {
                for (int r = 0; r < WORLD; r++) {
                    ranks.add(RankProcess.start("etcd-rank" + r, Map.of("RANK", Integer.toString(r), "WORLD_SIZE",
                            Integer.toString(WORLD), "LOCAL_RANK", Integer.toString(r), "MASTER_ADDR", "127.0.0.1",
                            "MASTER_PORT", "29999", "SYMMEM_STORE", target, "SYMMEM_HTTP_PORT", Integer.toString(base),
                            "SYMMEM_BACKEND", "host", "SYMMEM_TIMEOUT_LIVENESS", "2s"), "serve"));
                }
                for (int r = 0; r < WORLD; r++) {
                    rankHttp.await(base + r, "/v1/world", 200, "\"state\":\"READY\"", 90);
                }

                HttpResponse<String> put = rankHttp.put(base + 2, "/v1/store/keys/it/from-rank-2", "on etcd".getBytes(StandardCharsets.UTF_8));
                assertThat(put.statusCode()).as(put.body()).isEqualTo(204);
                HttpResponse<String> read = rankHttp.get(base, "/v1/store/keys/it/from-rank-2");
                assertThat(read.statusCode()).isEqualTo(200);
                assertThat(read.body()).isEqualTo("on etcd");

                List<CompletableFuture<HttpResponse<String>>> barrier = new ArrayList<>();
                for (int r = 0; r < WORLD; r++) {
                    barrier.add(http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (base + r)
                                    + "/v1/groups/world/barrier?timeout=30s")).timeout(Duration.ofSeconds(40))
                            .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()));
                }
                for (CompletableFuture<HttpResponse<String>> reply : barrier) {
                    assertThat(reply.join().statusCode()).as(reply.join().body()).isEqualTo(200);
                }

                long killed = System.nanoTime();
                ranks.get(2).kill();
                // Two mechanisms race here, both right: rank 2's etcd lease expiring (its member key
                // removed) and rank 0's heartbeat monitor (no beat for SYMMEM_TIMEOUT_LIVENESS).
                HttpResponse<String> seen = rankHttp.await(base, "/v1/world", 200, RANK_2_GONE, 15);
                double seconds = (System.nanoTime() - killed) / 1e9;
                assertThat(seen.body()).containsPattern(java.util.regex.Pattern.quote(RANK_2_GONE) + ",\"detail\":\"[^\"]*(its etcd lease expired|no heartbeat for)");
                System.out.printf("EtcdWorldIT: rank 2 killed, seen gone by rank 0 after %.1f s%n", seconds);
                rankHttp.await(base + 1, "/v1/world", 200, RANK_2_GONE, 15);
            } finally {
                ranks.forEach(RankProcess::close);
            }
        }
    }
}
