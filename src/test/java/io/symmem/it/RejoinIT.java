package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A world of three `serve` ranks survives a rank's restart, as a pod restarts on Kubernetes: the rank is
 * killed (SIGKILL) and started again with the same RANK, nothing else is touched, and every rank is ready
 * again in a new generation of the world. The survivors say so (a {@code reformed} event, the generation
 * in /v1/world, the reform counter in the metrics); a group of the lost generation is refused (410)
 * and can be made again; the world's collectives give the right sums in the new generation. The same
 * when the rank that hosts the store restarts (the store starts empty; generations still go up).
 */
class RejoinIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final int WORLD = 3;

    private int store;
    private int base;
    private int management;
    private final List<RankProcess> ranks = new ArrayList<>();

    @org.junit.jupiter.api.BeforeEach
    void ports() throws IOException {
        store = Ports.free();
        base = Ports.freeBlock(WORLD);
        management = Ports.freeBlock(WORLD);
    }

    @AfterEach
    void stop() {
        ranks.forEach(RankProcess::close);
    }

    @Test
    void aRestartedRankRejoinsAndEveryRankIsReadyInTheNextGeneration() throws Exception {
        startAll("rejoin");
        assertThat(allReduce(1)).isEqualTo("[6]");
        makeGroup("pair", 0, 1);

        ranks.get(2).kill();
        long restartedAt = System.nanoTime();
        ranks.set(2, start("rejoin", 2, 1));
        awaitAllReady(Duration.ofSeconds(90));
        System.out.printf("RejoinIT: rank 2 restarted; every rank ready again %d ms after its start%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt));

        for (int r = 0; r < WORLD; r++) {
            JsonNode world = getJson(base + r, "/v1/world");
            assertThat(world.get("state").asText()).as(world.toString()).isEqualTo("READY");
            assertThat(world.get("generation").asLong()).as("rank %d: %s", r, world).isEqualTo(1);
            assertThat(world.get("reforms").asLong()).as("rank %d: %s", r, world).isEqualTo(r == 2 ? 0 : 1);
        }
        String reformed = awaitEvent(base, "reformed");
        assertThat(reformed).contains("\"generation\":1").contains("\"ranks\":[0,1,2]");
        assertThat(metrics(management)).containsPattern("symmem_world_reforms_total(\\{[^}]*})? 1\\.0")
                .containsPattern("symmem_world_generation(\\{[^}]*})? 1\\.0");

        assertThat(allReduce(2)).isEqualTo("[12]");
        RawHttp.Reply stale = RawHttp.exchange(base, "POST", "/v1/groups/pair/barrier?timeout=10s", Map.of(), null);
        assertThat(stale.status()).as(stale.body()).isEqualTo(410);
        assertThat(stale.body()).contains("generation 0").contains("generation 1").contains("make the group again");
        makeGroup("pair", 0, 1);
        List<CompletableFuture<HttpResponse<String>>> barrier = Stream.of(0, 1)
                .map(r -> post(base + r, "/v1/groups/pair/barrier?timeout=30s", null)).toList();
        barrier.forEach(b -> assertThat(b.join().statusCode()).as(b.join().body()).isEqualTo(200));
    }

    @Test
    void theRankThatHostsTheStoreRestartsAndTheWorldFormsAgain() throws Exception {
        startAll("rehost");
        ranks.get(0).kill();
        long restartedAt = System.nanoTime();
        ranks.set(0, start("rehost", 0, 1));
        awaitAllReady(Duration.ofSeconds(90));
        System.out.printf("RejoinIT: rank 0 (the store's host) restarted; every rank ready again %d ms after its start%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt));
        for (int r = 0; r < WORLD; r++) {
            JsonNode world = getJson(base + r, "/v1/world");
            // The new store counts on from the generation the survivors knew, not from 0 again.
            assertThat(world.get("generation").asLong()).as("rank %d: %s", r, world).isGreaterThanOrEqualTo(1);
        }
        assertThat(allReduce(3)).isEqualTo("[18]");
    }

    @Test
    void aRankStoppedInOrderAndStartedAgainIsMetByAWorldThatFormsAgain() throws Exception {
        // SIGTERM, as Kubernetes stops a pod it drains: the rank leaves in order, so no survivor sees a death;
        // its return moves the world's generation, and the survivors form the world again with it.
        startAll("drain");
        assertThat(ranks.get(1).terminate(30)).as(ranks.get(1).output()).isZero();
        ranks.set(1, start("drain", 1, 1));
        awaitAllReady(Duration.ofSeconds(90));
        for (int r = 0; r < WORLD; r++) {
            assertThat(getJson(base + r, "/v1/world").get("generation").asLong()).as("rank %d", r).isEqualTo(1);
        }
        assertThat(allReduce(4)).isEqualTo("[24]");
    }

    @Test
    void theChaosCommandRestartsRanksRoundAfterRound() throws Exception {
        try (RankProcess chaos = RankProcess.start("chaos-restart", Map.of("SYMMEM_BACKEND", "host"), "chaos", "--restart",
                "--ranks", "3", "--rounds", "3", "--seed", "7")) {
            int code = chaos.exitCode(240);
            String out = chaos.output();
            assertThat(out).as(out).containsPattern("round +1: rank \\d restarted; every rank ready in generation 1 after \\d+ ms")
                    .containsPattern("round +3: rank \\d restarted; every rank ready in generation 3 after \\d+ ms")
                    .containsPattern("3 rounds: restarted rank's start to every rank ready: p50 \\d+ ms, max \\d+ ms")
                    .contains("symmem chaos --restart: PASS");
            assertThat(code).as(out).isZero();
        }
    }

    private void startAll(String name) throws Exception {
        for (int r = 0; r < WORLD; r++) {
            ranks.add(start(name, r, 0));
        }
        awaitAllReady(Duration.ofSeconds(90));
    }

    private RankProcess start(String name, int rank, int life) throws IOException {
        Map<String, String> env = new HashMap<>(Map.of("WORLD_SIZE", Integer.toString(WORLD), "RANK", Integer.toString(rank),
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(store),
                "SYMMEM_HTTP_PORT", Integer.toString(base), "SYMMEM_MANAGEMENT_PORT", Integer.toString(management),
                "SYMMEM_BACKEND", "host"));
        return RankProcess.start(name + "-" + rank + "-" + life, env, "serve");
    }

    private void awaitAllReady(Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        for (int r = 0; r < WORLD; r++) {
            while (!ready(r)) {
                if (System.nanoTime() > deadline || !ranks.get(r).isAlive()) {
                    StringBuilder all = new StringBuilder();
                    for (int o = 0; o < WORLD; o++) {
                        all.append("---- rank ").append(o).append('\n').append(ranks.get(o).output()).append('\n');
                    }
                    throw new AssertionError("rank " + r + " is not ready again:\n" + all);
                }
                Thread.sleep(50);
            }
        }
    }

    private boolean ready(int rank) {
        try {
            return RawHttp.exchange(management + rank, "GET", "/q/health/ready", Map.of(), null).status() == 200;
        } catch (IOException notListening) {
            return false;
        }
    }

    /** An int64 sum over the world group, each rank adding (rank + 1) * scale; the answer every rank got. */
    private String allReduce(long scale) throws IOException {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int r = 0; r < WORLD; r++) {
            calls.add(post(base + r, "/v1/groups/world/all-reduce?timeout=30s",
                    "{\"dtype\":\"int64\",\"op\":\"sum\",\"values\":[" + (r + 1) * scale + "]}"));
        }
        String first = null;
        for (CompletableFuture<HttpResponse<String>> call : calls) {
            HttpResponse<String> reply = call.join();
            assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
            String values = JSON.readTree(reply.body()).get("values").toString();
            assertThat(first == null || first.equals(values)).as("every rank's sum: %s", values).isTrue();
            first = values;
        }
        return first;
    }

    private void makeGroup(String name, int... members) {
        String ranksJson = java.util.Arrays.toString(members).replace(" ", "");
        List<CompletableFuture<HttpResponse<String>>> made = new ArrayList<>();
        for (int r : members) {
            made.add(post(base + r, "/v1/groups?timeout=30s", "{\"name\":\"" + name + "\",\"ranks\":" + ranksJson + "}"));
        }
        made.forEach(m -> assertThat(m.join().statusCode()).as(m.join().body()).isEqualTo(201));
    }

    private static CompletableFuture<HttpResponse<String>> post(int port, String target, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + target))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json");
        b.POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode getJson(int port, String target) throws IOException {
        RawHttp.Reply reply = RawHttp.exchange(port, "GET", target, Map.of(), null);
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        return JSON.readTree(reply.body());
    }

    private static String metrics(int port) throws IOException {
        return RawHttp.exchange(port, "GET", "/q/metrics", Map.of(), null).body();
    }

    /** Reads the rank's event stream from the start until an event of {@code type}; its data line. */
    private static String awaitEvent(int port, String type) throws Exception {
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/events"))
                .header("Accept", "text/event-stream").build();
        CompletableFuture<HttpResponse<Stream<String>>> stream = HTTP.sendAsync(get, HttpResponse.BodyHandlers.ofLines());
        HttpResponse<Stream<String>> reply = stream.get(10, TimeUnit.SECONDS);
        CompletableFuture<String> found = CompletableFuture.supplyAsync(() -> reply.body()
                .filter(line -> line.startsWith("data:") && line.contains("\"type\":\"" + type + "\""))
                .findFirst().orElse("(stream ended)"));
        try {
            return found.get(20, TimeUnit.SECONDS);
        } finally {
            reply.body().close();
        }
    }
}
