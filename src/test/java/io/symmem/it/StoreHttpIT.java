package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store's HTTP routes on a real one-rank world (the packaged application, as users run it). */
class StoreHttpIT {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static RankProcess rank;
    private static int port;
    private static int management;

    @BeforeAll
    static void startRank() throws Exception {
        port = Ports.freeBlock(1);
        management = Ports.freeBlock(1);
        rank = RankProcess.start("store-http", Map.of("WORLD_SIZE", "1", "RANK", "0", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", Integer.toString(Ports.free()), "SYMMEM_HTTP_PORT", Integer.toString(port),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(management)), "serve");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                if (send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/q/health/ready")).GET()).statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException starting) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("rank never became ready:\n" + rank.output());
            }
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stopRank() {
        if (rank != null) {
            rank.close();
        }
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static HttpResponse<byte[]> send(HttpRequest.Builder request) throws Exception {
        return HTTP.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    private static HttpRequest.Builder json(String path, String body) {
        return HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    @Test
    void binaryValuesUnderKeysWithSlashesRoundTrip() throws Exception {
        byte[] value = {0, 1, 2, (byte) 0xFF, 10, 13};
        HttpResponse<byte[]> put = send(HttpRequest.newBuilder(uri("/v1/store/keys/jobs/a/b"))
                .header("Content-Type", "application/octet-stream").PUT(HttpRequest.BodyPublishers.ofByteArray(value)));
        assertThat(put.statusCode()).isEqualTo(204);
        HttpResponse<byte[]> get = send(HttpRequest.newBuilder(uri("/v1/store/keys/jobs/a/b")).GET());
        assertThat(get.statusCode()).isEqualTo(200);
        assertThat(get.body()).isEqualTo(value);
        HttpResponse<byte[]> list = send(HttpRequest.newBuilder(uri("/v1/store/keys?prefix=jobs/")).GET());
        assertThat(text(list)).isEqualTo("{\"keys\":[\"jobs/a/b\"]}");
        assertThat(send(HttpRequest.newBuilder(uri("/v1/store/keys/jobs/a/b")).DELETE()).statusCode()).isEqualTo(204);
        HttpResponse<byte[]> gone = send(HttpRequest.newBuilder(uri("/v1/store/keys/jobs/a/b")).GET());
        assertThat(gone.statusCode()).isEqualTo(404);
        assertThat(text(gone)).contains("\"key\":\"jobs/a/b\"").contains("\"error\":");
        assertThat(send(HttpRequest.newBuilder(uri("/v1/store/keys/jobs/a/b")).DELETE()).statusCode()).isEqualTo(404);
    }

    @Test
    void addAndCompareSet() throws Exception {
        assertThat(text(send(json("/v1/store/keys/http-counter/add?delta=5", "")))).isEqualTo("{\"value\":5}");
        assertThat(text(send(json("/v1/store/keys/http-counter/add?delta=-2", "")))).isEqualTo("{\"value\":3}");
        assertThat(send(json("/v1/store/keys/http-counter/add?delta=abc", "")).statusCode()).isEqualTo(400);
        // "" -> "one" on a missing key, then a mismatch, then a match.
        String one = java.util.Base64.getEncoder().encodeToString("one".getBytes());
        String two = java.util.Base64.getEncoder().encodeToString("two".getBytes());
        assertThat(text(send(json("/v1/store/keys/http-cas/compare-set", "{\"expected\":\"\",\"desired\":\"" + one + "\"}"))))
                .isEqualTo("{\"value\":\"" + one + "\",\"swapped\":true}");
        assertThat(text(send(json("/v1/store/keys/http-cas/compare-set", "{\"expected\":\"" + two + "\",\"desired\":\"" + two + "\"}"))))
                .isEqualTo("{\"value\":\"" + one + "\",\"swapped\":false}");
        assertThat(send(json("/v1/store/keys/http-cas/compare-set", "{\"expected\":\"***\",\"desired\":\"" + two + "\"}"))
                .statusCode()).isEqualTo(400);
    }

    @Test
    void longPollAndWaitAnswerWhenTheKeyArrivesOr504() throws Exception {
        CompletableFuture<HttpResponse<byte[]>> poll = HTTP.sendAsync(HttpRequest.newBuilder(uri("/v1/store/keys/late?wait=20s"))
                .timeout(Duration.ofSeconds(25)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        CompletableFuture<HttpResponse<byte[]>> waiting = HTTP.sendAsync(json("/v1/store/wait", "{\"keys\":[\"late\"],\"timeout\":\"20s\"}")
                .timeout(Duration.ofSeconds(25)).build(), HttpResponse.BodyHandlers.ofByteArray());
        send(HttpRequest.newBuilder(uri("/v1/store/keys/late")).PUT(HttpRequest.BodyPublishers.ofString("here")));
        HttpResponse<byte[]> polled = poll.get(25, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(polled.statusCode()).isEqualTo(200);
        assertThat(text(polled)).isEqualTo("here");
        assertThat(waiting.get(25, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);

        HttpResponse<byte[]> timedOut = send(HttpRequest.newBuilder(uri("/v1/store/keys/never?wait=300ms")).GET());
        assertThat(timedOut.statusCode()).isEqualTo(504);
        assertThat(text(timedOut)).contains("\"key\":\"never\"");
        HttpResponse<byte[]> waitTimedOut = send(json("/v1/store/wait", "{\"keys\":[\"late\",\"nope\"],\"timeout\":\"300ms\"}"));
        assertThat(waitTimedOut.statusCode()).isEqualTo(504);
        assertThat(text(waitTimedOut)).contains("\"key\":\"nope\"");
        assertThat(send(HttpRequest.newBuilder(uri("/v1/store/keys/x?wait=soon")).GET()).statusCode()).isEqualTo(400);
        assertThat(send(json("/v1/store/wait", "{\"keys\":[]}")).statusCode()).isEqualTo(400);
    }

    @Test
    void statsCountKeysAndOperations() throws Exception {
        send(HttpRequest.newBuilder(uri("/v1/store/keys/stats-key")).PUT(HttpRequest.BodyPublishers.ofString("v")));
        HttpResponse<byte[]> stats = send(HttpRequest.newBuilder(uri("/v1/store/stats")).GET());
        assertThat(stats.statusCode()).isEqualTo(200);
        assertThat(text(stats)).contains("\"hostsStore\":true").contains("\"keys\":").contains("\"SET\":")
                .contains("\"openConnections\":");
    }
}
