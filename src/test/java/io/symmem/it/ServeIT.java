package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** A rank served over HTTP: /v1/info and readiness, before and after the world rendezvous; store metrics, read live. */
class ServeIT {
    private final RankHttp http = new RankHttp();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.get(port, path);
    }

    private HttpResponse<String> await(int port, String path, int status, long seconds) throws Exception {
        return http.await(port, path, status, "", seconds);
    }

    private HttpResponse<String> await(int port, String path, int status, String text, long seconds) throws Exception {
        return http.await(port, path, status, text, seconds);
    }

    private static double value(String metrics, String name, String label) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$").matcher(metrics);
        while (m.find()) {
            if (label.isEmpty() || (m.group(1) != null && m.group(1).contains(label))) {
                return Double.parseDouble(m.group(2));
            }
        }
        throw new AssertionError("no sample " + name + (label.isEmpty() ? "" : "{" + label + "}") + " in:\n" + metrics);
    }

    @Test
    void twoRanksBecomeReadyTogetherAndDescribeTheWorld() throws Exception {
        int store = Ports.free();
        int base = Ports.freeBlock(2);
        int management = Ports.freeBlock(2);
        Map<String, String> common = Map.of("WORLD_SIZE", "2", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", Integer.toString(store), "SYMMEM_HTTP_PORT", Integer.toString(base),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(management), "SYMMEM_TIMEOUT_RENDEZVOUS", "60s");
        Map<String, String> env0 = new java.util.HashMap<>(common);
        env0.put("RANK", "0");
        try (RankProcess rank0 = RankProcess.start("serve0", env0, "serve")) {
            // Alone, rank 0 is alive but not ready: its peer has not joined.
            // (HTTP comes up a moment before the serve command starts joining: NOT_STARTED, then JOINING.)
            HttpResponse<String> notReady = await(management, "/q/health/ready", 503, "JOINING", 60);
            assertThat(notReady.body()).contains("\"status\": \"DOWN\"");
            Map<String, String> env1 = new java.util.HashMap<>(common);
            env1.put("RANK", "1");
            try (RankProcess rank1 = RankProcess.start("serve1", env1, "serve")) {
                await(management, "/q/health/ready", 200, 60);
                await(management + 1, "/q/health/ready", 200, 60);
                // Health and metrics live on the management port only; the API's port serves the API.
                assertThat(get(base, "/q/health/ready").statusCode()).isEqualTo(404);
                assertThat(get(base + 1, "/q/metrics").statusCode()).isEqualTo(404);
                HttpResponse<String> info = get(base + 1, "/v1/info");
                assertThat(info.statusCode()).isEqualTo(200);
                assertThat(info.body()).contains("\"rank\":1").contains("\"worldSize\":2")
                        .contains("\"backend\":\"host\"").contains("\"state\":\"READY\"")
                        .contains("\"httpPort\":" + base).contains("\"httpPort\":" + (base + 1));
                assertThat(get(base, "/v1/config").body()).contains("\"variable\":\"RANK\"");
                // Rank 0 hosts the store: its figures are metrics, read from the store when scraped. Read
                // once, without waiting: the rendezvous is over, so rank 1's connection and its keys are there.
                String metrics = get(management, "/q/metrics").body();
                assertThat(value(metrics, "symmem_store_connections_accepted_total", "")).as(metrics).isGreaterThanOrEqualTo(1);
                assertThat(value(metrics, "symmem_store_connections_open", "")).as(metrics).isGreaterThanOrEqualTo(1);
                assertThat(metrics).contains("symmem_store_waits_pending ");
                double keys = value(metrics, "symmem_store_keys", "");
                double sets = value(metrics, "symmem_store_requests_total", "op=\"set\"");
                assertThat(keys).as(metrics).isGreaterThanOrEqualTo(1);
                assertThat(sets).as(metrics).isGreaterThanOrEqualTo(1);
                // Exact at the moment of the scrape: a key set through rank 0 (applied when the PUT answers)
                // is in the very next one.
                HttpResponse<String> put = http.put(base, "/v1/store/keys/serve-it/metrics", new byte[] {1});
                assertThat(put.statusCode()).as(put.body()).isEqualTo(204);
                String after = get(management, "/q/metrics").body();
                assertThat(value(after, "symmem_store_keys", "")).as(after).isEqualTo(keys + 1);
                assertThat(value(after, "symmem_store_requests_total", "op=\"set\"")).as(after).isGreaterThanOrEqualTo(sets + 1);
                assertThat(rank0.isAlive()).as(rank0.output()).isTrue();
                assertThat(rank1.isAlive()).as(rank1.output()).isTrue();
            }
        }
    }
}
