package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A rank served over HTTP: /v1/info and readiness, before and after the world rendezvous; store metrics. */
class ServeIT {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Polls until the rank answers (it is starting) or the deadline passes. */
    private HttpResponse<String> await(int port, String path, int status, long seconds) throws Exception {
        return await(port, path, status, "", seconds);
    }

    /** Polls until the rank answers {@code status} with a body containing {@code text}. */
    private HttpResponse<String> await(int port, String path, int status, String text, long seconds) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        HttpResponse<String> last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = get(port, path);
                if (last.statusCode() == status && last.body().contains(text)) {
                    return last;
                }
            } catch (java.io.IOException notYetListening) {
                // the rank is still starting
            }
            Thread.sleep(200);
        }
        throw new AssertionError("GET " + path + " on port " + port + " never answered " + status + " with '" + text + "'; last: "
                + (last == null ? "no answer" : last.statusCode() + " " + last.body()));
    }

    /** Polls /q/metrics until a line matches {@code pattern}; returns that scrape. */
    private String awaitMetric(int port, String pattern, long seconds) throws Exception {
        java.util.regex.Pattern wanted = java.util.regex.Pattern.compile(pattern);
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            last = get(port, "/q/metrics").body();
            if (wanted.matcher(last).find()) {
                return last;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("/q/metrics on port " + port + " never matched " + pattern + "; last:\n" + last);
    }

    @Test
    void twoRanksBecomeReadyTogetherAndDescribeTheWorld() throws Exception {
        int store = Ports.free();
        int base = Ports.freeBlock(2);
        Map<String, String> common = Map.of("WORLD_SIZE", "2", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", Integer.toString(store), "SYMMEM_HTTP_PORT", Integer.toString(base),
                "SYMMEM_TIMEOUT_RENDEZVOUS", "60s");
        Map<String, String> env0 = new java.util.HashMap<>(common);
        env0.put("RANK", "0");
        try (RankProcess rank0 = RankProcess.start("serve0", env0, "serve")) {
            // Alone, rank 0 is alive but not ready: its peer has not joined.
            // (HTTP comes up a moment before the serve command starts joining: NOT_STARTED, then JOINING.)
            HttpResponse<String> notReady = await(base, "/q/health/ready", 503, "JOINING", 60);
            assertThat(notReady.body()).contains("\"status\": \"DOWN\"");
            Map<String, String> env1 = new java.util.HashMap<>(common);
            env1.put("RANK", "1");
            try (RankProcess rank1 = RankProcess.start("serve1", env1, "serve")) {
                await(base, "/q/health/ready", 200, 60);
                await(base + 1, "/q/health/ready", 200, 60);
                HttpResponse<String> info = get(base + 1, "/v1/info");
                assertThat(info.statusCode()).isEqualTo(200);
                assertThat(info.body()).contains("\"rank\":1").contains("\"worldSize\":2")
                        .contains("\"backend\":\"host\"").contains("\"state\":\"READY\"")
                        .contains("\"httpPort\":" + base).contains("\"httpPort\":" + (base + 1));
                assertThat(get(base, "/v1/config").body()).contains("\"variable\":\"RANK\"");
                // Rank 0 hosts the store: its figures are metrics (copied every 2 s from the store's loop, so
                // the first copy may predate rank 1's connection: wait for one that shows it).
                String metrics = awaitMetric(base, "symmem_store_connections_accepted_total(\\{[^}]*\\})? [1-9]", 15);
                assertThat(metrics).containsPattern("symmem_store_keys(\\{[^}]*\\})? [1-9]")
                        .contains("symmem_store_requests_total{op=\"set\"")
                        .contains("symmem_store_waits_pending");
                assertThat(rank0.isAlive()).as(rank0.output()).isTrue();
                assertThat(rank1.isAlive()).as(rank1.output()).isTrue();
            }
        }
    }
}
