package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.store.GroupRanks;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The sidecar's groups, control-plane collectives, bootstrap ids and world events on a world of four
 * `serve` ranks started by `symmem launch -n 4 serve`: every rank's sidecar is called at once, as the
 * four processes of a pod would, and every rank must get the same answer. Each test uses groups of its
 * own: a collective that times out leaves its group's members out of step, as in any collective library.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GroupsIT {
    private static final int WORLD = 4;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static RankProcess launcher;
    private static int base;

    @BeforeAll
    static void launch() throws Exception {
        base = Ports.freeBlock(WORLD);
        launcher = RankProcess.start("groups", Map.of("SYMMEM_HTTP_PORT", Integer.toString(base)), "launch", "-n",
                Integer.toString(WORLD), "serve");
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        for (int r = 0; r < WORLD; r++) {
            while (true) {
                try {
                    HttpResponse<String> world = send(r, "GET", "/v1/world", null).join();
                    if (world.statusCode() == 200 && JSON.readTree(world.body()).get("state").asText().equals("READY")) {
                        break;
                    }
                } catch (RuntimeException starting) {
                    // not listening yet
                }
                assertThat(System.nanoTime()).as("rank %d ready; launcher output:%n%s", r, launcher.output()).isLessThan(deadline);
                Thread.sleep(200);
            }
        }
    }

    @AfterAll
    static void stop() {
        if (launcher != null) {
            launcher.close();
        }
    }

    private static CompletableFuture<HttpResponse<String>> send(int rank, String method, String target, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (base + rank) + target))
                .timeout(Duration.ofSeconds(60));
        if (body != null) {
            // The store's values are bytes; every other body is JSON.
            b.header("Content-Type", method.equals("PUT") ? "application/octet-stream" : "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The same kind of call on the given ranks at once; the replies, index = position in {@code ranks}. */
    private static List<HttpResponse<String>> onRanks(List<Integer> ranks, String method, IntFunction<String> target,
            IntFunction<String> body) {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int r : ranks) {
            calls.add(send(r, method, target.apply(r), body == null ? null : body.apply(r)));
        }
        return calls.stream().map(CompletableFuture::join).toList();
    }

    private static List<Integer> all() {
        return IntStream.range(0, WORLD).boxed().toList();
    }

    private static JsonNode json(HttpResponse<String> reply) {
        try {
            return JSON.readTree(reply.body());
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + reply.body(), e);
        }
    }

    private static void allAnswer(List<HttpResponse<String>> replies, int status) {
        for (int i = 0; i < replies.size(); i++) {
            assertThat(replies.get(i).statusCode()).as("reply %d: %s", i, replies.get(i).body()).isEqualTo(status);
        }
    }

    @Test
    @Order(1)
    void everyCollectiveOnEveryRankAtOnceGivesEveryRankTheSameAnswer() {
        // Two pairs made at once, listed in another order than the world's.
        List<HttpResponse<String>> made = onRanks(all(), "POST", r -> "/v1/groups?timeout=30s",
                r -> r < 2 ? "{\"name\":\"low\",\"ranks\":[1,0]}" : "{\"name\":\"high\",\"ranks\":[3,2]}");
        allAnswer(made, 201);
        assertThat(json(made.get(0)).get("groupRank").asInt()).isEqualTo(1);
        assertThat(json(made.get(3)).get("groupRank").asInt()).isZero();
        allAnswer(onRanks(List.of(0), "POST", r -> "/v1/groups", r -> "{\"name\":\"low\",\"ranks\":[1,0]}"), 200);
        assertThat(onRanks(List.of(1), "POST", r -> "/v1/groups", r -> "{\"name\":\"low\",\"ranks\":[0,1]}").get(0).statusCode())
                .as("the same name with other ranks").isEqualTo(409);

        allAnswer(onRanks(all(), "POST", r -> "/v1/groups/world/barrier?timeout=30s", null), 200);

        List<HttpResponse<String>> broadcast = onRanks(all(), "POST", r -> "/v1/groups/world/broadcast?root=2&timeout=30s",
                r -> r == 2 ? "{\"value\":{\"from\":2,\"text\":\"héllo\"}}" : "{\"value\":\"ignored\"}");
        allAnswer(broadcast, 200);
        broadcast.forEach(b -> assertThat(json(b).get("value").toString()).isEqualTo("{\"from\":2,\"text\":\"héllo\"}"));

        List<HttpResponse<String>> gathered = onRanks(all(), "POST", r -> "/v1/groups/world/all-gather?timeout=30s",
                r -> "{\"value\":{\"rank\":" + r + "}}");
        allAnswer(gathered, 200);
        gathered.forEach(g -> assertThat(json(g).get("values").toString())
                .isEqualTo("[{\"rank\":0},{\"rank\":1},{\"rank\":2},{\"rank\":3}]"));

        List<HttpResponse<String>> sums = onRanks(all(), "POST", r -> "/v1/groups/world/all-reduce?timeout=30s",
                r -> "{\"dtype\":\"int64\",\"op\":\"sum\",\"values\":[" + r + ", 1, 1099511627776]}");
        allAnswer(sums, 200);
        sums.forEach(s -> assertThat(json(s).get("values").toString()).isEqualTo("[6,4,4398046511104]"));

        // float32 rounds at every step, in rank order: 0.1f + 0.2f + 0.3f + 0.4f, then / 4, in float.
        float f = 0.1f;
        f = f + 0.2f;
        f = f + 0.3f;
        f = f + 0.4f;
        float avg = f / 4;
        List<HttpResponse<String>> avgs = onRanks(all(), "POST", r -> "/v1/groups/world/all-reduce",
                r -> "{\"dtype\":\"float32\",\"op\":\"avg\",\"values\":[" + (r + 1) / 10.0 + ", -1e30]}");
        allAnswer(avgs, 200);
        avgs.forEach(a -> {
            assertThat((float) json(a).get("values").get(0).asDouble()).isEqualTo(avg);
            assertThat(json(a).get("values").get(1).asDouble()).isEqualTo((double) -1e30f, org.assertj.core.data.Offset.offset(1e23));
        });

        List<HttpResponse<String>> pairs = onRanks(all(), "POST", r -> "/v1/groups/" + (r < 2 ? "low" : "high") + "/all-reduce",
                r -> "{\"dtype\":\"float64\",\"op\":\"max\",\"values\":[" + r + ".5]}");
        allAnswer(pairs, 200);
        assertThat(json(pairs.get(0)).get("values").get(0).asDouble()).isEqualTo(1.5);
        assertThat(json(pairs.get(3)).get("values").get(0).asDouble()).isEqualTo(3.5);

        // A disagreement is everyone's 409, naming the rank that differs.
        List<HttpResponse<String>> mixed = onRanks(all(), "POST", r -> "/v1/groups/world/all-reduce",
                r -> "{\"dtype\":\"" + (r == 3 ? "float64" : "int64") + "\",\"op\":\"sum\",\"values\":[1]}");
        allAnswer(mixed, 409);
        mixed.forEach(m -> {
            assertThat(json(m).get("detail").asText()).contains("world rank 3 sent float64 sum of 1 values");
            assertThat(json(m).get("ranks").toString()).isEqualTo("[3]");
        });

        List<HttpResponse<String>> lists = onRanks(all(), "GET", r -> "/v1/groups", null);
        allAnswer(lists, 200);
        assertThat(json(lists.get(0)).get("groups").findValuesAsText("name")).containsExactly("world", "low");
        assertThat(json(lists.get(2)).get("groups").findValuesAsText("name")).containsExactly("world", "high");
    }

    @Test
    @Order(2)
    void everyOtherRouteOnEveryRankAtOnce() throws Exception {
        // Every GET route without parameters that the OpenAPI document lists (the event stream apart: it never ends).
        JsonNode paths = JSON.readTree(send(0, "GET", "/q/openapi?format=json", null).join().body()).get("paths");
        List<String> reads = new ArrayList<>();
        paths.fieldNames().forEachRemaining(path -> {
            if (paths.get(path).has("get") && !path.contains("{") && !path.equals("/v1/events")) {
                reads.add(path);
            }
        });
        assertThat(reads).contains("/v1/info", "/v1/topology", "/v1/config", "/v1/world", "/v1/groups", "/v1/store/keys", "/v1/store/stats");
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (String path : reads) {
            for (int r = 0; r < WORLD; r++) {
                calls.add(send(r, "GET", path, null));
            }
        }
        for (int i = 0; i < calls.size(); i++) {
            HttpResponse<String> reply = calls.get(i).join();
            assertThat(reply.statusCode()).as("GET %s on rank %d: %s", reads.get(i / WORLD), i % WORLD, reply.body()).isEqualTo(200);
        }
        // The store's routes, every rank on a key of its own, then on one shared counter.
        allAnswer(onRanks(all(), "PUT", r -> "/v1/store/keys/every-route/" + r, r -> "v" + r), 204);
        List<HttpResponse<String>> values = onRanks(all(), "GET", r -> "/v1/store/keys/every-route/" + ((r + 1) % WORLD) + "?wait=10s", null);
        for (int r = 0; r < WORLD; r++) {
            assertThat(values.get(r).body()).isEqualTo("v" + (r + 1) % WORLD);
        }
        allAnswer(onRanks(all(), "POST", r -> "/v1/store/keys/every-route-count/add?delta=" + (r + 1), r -> ""), 200);
        assertThat(onRanks(List.of(2), "GET", r -> "/v1/store/keys/every-route-count", null).get(0).body()).isEqualTo("10");
        allAnswer(onRanks(all(), "POST", r -> "/v1/store/wait", r -> "{\"keys\":[\"every-route/0\",\"every-route/3\"],\"timeout\":\"10s\"}"), 200);
        List<HttpResponse<String>> swaps = onRanks(all(), "POST", r -> "/v1/store/keys/every-route-cas/compare-set",
                r -> "{\"expected\":\"\",\"desired\":\"" + java.util.Base64.getEncoder().encodeToString(("rank " + r).getBytes(StandardCharsets.UTF_8))
                        + "\"}");
        allAnswer(swaps, 200);
        assertThat(swaps.stream().map(GroupsIT::json).map(j -> j.get("value").asText()).distinct()).as("one winner, seen by all")
                .hasSize(1);
        assertThat(swaps.stream().map(GroupsIT::json).filter(j -> j.get("swapped").asBoolean()).count()).isEqualTo(1);
        allAnswer(onRanks(all(), "DELETE", r -> "/v1/store/keys/every-route/" + r, null), 204);
    }

    @Test
    @Order(3)
    void bootstrapIdsAreTheSameBytesOnEveryRankOrSayWhichLibraryIsMissing() throws Exception {
        List<HttpResponse<String>> ids = onRanks(all(), "GET", r -> "/v1/groups/world/nccl-unique-id?timeout=30s", null);
        int status = ids.get(0).statusCode();
        allAnswer(ids, status);
        if (status == 503) {
            // No NCCL on this machine (the CPU machines): rank 0 says so, the others pass on rank 0's reason.
            assertThat(json(ids.get(0)).get("detail").asText()).contains("NCCL cannot make a unique id on rank 0").contains("libnccl.so.2");
            for (int r = 1; r < WORLD; r++) {
                assertThat(json(ids.get(r)).get("detail").asText()).contains("rank 0 (world rank 0) could not make the NCCL unique id");
            }
            System.out.println("GroupsIT: NCCL is not installed here, so the ids' bytes were checked on the GPU machine only "
                    + "(scripts/gpu/run-http.sh); here: the 503 naming the missing library, on every rank");
        } else {
            assertThat(status).isEqualTo(200);
            String first = json(ids.get(0)).get("base64").asText();
            ids.forEach(i -> assertThat(json(i).get("base64").asText()).isEqualTo(first));
            assertThat(json(ids.get(0)).get("bytes").asInt()).isEqualTo(128);
        }
    }

    @Test
    @Order(4)
    void aRankServedOverHttpAndARankUsingTheJavaExchangeMeetInOneGroup() throws Exception {
        String store = json(send(0, "GET", "/v1/world", null).join()).get("store").get("address").asText();
        int port = Integer.parseInt(store.substring(store.lastIndexOf(':') + 1));
        Vertx vertx = Vertx.vertx();
        try {
            TcpStoreClient client = TcpStoreClient.connect(vertx, "127.0.0.1", port, Duration.ofSeconds(10)).await()
                    .atMost(Duration.ofSeconds(20));
            // World rank 0 through its sidecar, world rank 1 as a Java program would do it.
            CompletableFuture<HttpResponse<String>> made = send(0, "POST", "/v1/groups?timeout=30s", "{\"name\":\"mixed\",\"ranks\":[0,1]}");
            GroupRanks.agree(client, "mixed", new int[] {0, 1}, 1, Duration.ofSeconds(30)).await().atMost(Duration.ofSeconds(40));
            assertThat(made.join().statusCode()).isEqualTo(201);
            CompletableFuture<HttpResponse<String>> gathered = send(0, "POST", "/v1/groups/mixed/all-gather?timeout=30s",
                    "{\"value\":\"over http\"}");
            List<byte[]> javaSide = new StoreExchange(client, "mixed", 1, 2)
                    .allGather("\"from java\"".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(30)).await()
                    .atMost(Duration.ofSeconds(40));
            assertThat(json(gathered.join()).get("values").toString()).isEqualTo("[\"over http\",\"from java\"]");
            assertThat(new String(javaSide.get(0), StandardCharsets.UTF_8)).isEqualTo("\"over http\"");
            client.close();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    @Test
    @Order(5)
    void aCollectiveARankMissesIs504NamingThatRankOnEveryOtherRank() {
        allAnswer(onRanks(all(), "POST", r -> "/v1/groups?timeout=30s", r -> "{\"name\":\"late\",\"ranks\":[0,1,2,3]}"), 201);
        List<HttpResponse<String>> waited = onRanks(List.of(0, 1, 2), "POST", r -> "/v1/groups/late/barrier?timeout=1500ms", null);
        allAnswer(waited, 504);
        waited.forEach(w -> {
            assertThat(json(w).get("ranks").toString()).isEqualTo("[3]");
            assertThat(json(w).get("detail").asText()).contains("group 'late' barrier: world ranks [3] did not come in time");
        });
        // The sidecars keep serving.
        allAnswer(onRanks(all(), "GET", r -> "/v1/world", null), 200);
    }

    @Test
    @Order(6)
    void theEventStreamTellsOfEveryJoinAndReadyAndThenOfAKilledRank() throws Exception {
        // A world of its own, started rank by rank: under `launch`, the launcher would stop the survivors
        // as soon as one rank dies, racing the events this test reads.
        int world = 3;
        int store = Ports.free();
        int http = Ports.freeBlock(world);
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < world; r++) {
                ranks.add(RankProcess.start("events-" + r, Map.of("WORLD_SIZE", Integer.toString(world), "RANK", Integer.toString(r),
                        "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(store), "SYMMEM_HTTP_PORT", Integer.toString(http)),
                        "serve"));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            for (int r = 0; r < world; r++) {
                while (!ready(http + r)) {
                    assertThat(System.nanoTime()).as("rank %d ready; output:%n%s", r, ranks.get(r).output()).isLessThan(deadline);
                    Thread.sleep(200);
                }
            }
            List<List<String>> seen = new ArrayList<>();
            for (int r = 0; r < world - 1; r++) {
                List<String> lines = new CopyOnWriteArrayList<>();
                seen.add(lines);
                HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (http + r) + "/v1/events")).build(),
                        HttpResponse.BodyHandlers.ofLines()).thenAccept(reply -> reply.body().forEach(lines::add));
            }
            while (seen.stream().anyMatch(lines -> lines.stream().filter(l -> l.startsWith("event:ready")).count() < world)) {
                assertThat(System.nanoTime()).as("every survivor streams %d joins and readies: %s", world, seen).isLessThan(deadline);
                Thread.sleep(50);
            }
            seen.forEach(lines -> assertThat(lines.stream().filter(l -> l.startsWith("event:joined")).count()).isEqualTo(world));

            ranks.get(world - 1).kill();

            deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            String gone = "\"rank\":" + (world - 1);
            while (seen.stream().anyMatch(lines -> lines.stream().noneMatch(l -> l.startsWith("data:")
                    && l.contains("\"type\":\"departed\"") && l.contains(gone) && l.contains("\"orderly\":false"))
                    || lines.stream().noneMatch(l -> l.startsWith("event:aborted")))) {
                assertThat(System.nanoTime()).as("every survivor streams the departure and its abort: %s", seen).isLessThan(deadline);
                Thread.sleep(20);
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    private static boolean ready(int port) {
        try {
            HttpResponse<String> world = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/world")).build(),
                    HttpResponse.BodyHandlers.ofString());
            return world.statusCode() == 200 && JSON.readTree(world.body()).get("state").asText().equals("READY");
        } catch (java.io.IOException starting) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
