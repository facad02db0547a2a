package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sidecar's collectives as a workload calls them (two `serve` ranks, world 2, every rank's process
 * calling its own sidecar): concurrent callers of one group never get each other's answers, and after
 * a call times out on one member no member ever gets a 200 with a value of another round.
 */
class HttpCollectivePairingIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static TwoRankWorld world;

    @BeforeAll
    static void start() throws Exception {
        world = TwoRankWorld.start("pairing");
    }

    @AfterAll
    static void stop() {
        if (world != null) {
            world.close();
        }
    }

    private static CompletableFuture<HttpResponse<String>> post(int rank, String target, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + world.port(rank) + target))
                .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json");
        b.POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode json(HttpResponse<String> reply) {
        try {
            return JSON.readTree(reply.body());
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + reply.body(), e);
        }
    }

    /** Polls GET /v1/groups/{group} on {@code rank} until it has taken {@code rounds} rounds. */
    private static void awaitRounds(int rank, String group, long rounds) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            HttpRequest get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + world.port(rank) + "/v1/groups/" + group)).build();
            HttpResponse<String> reply = HTTP.sendAsync(get, HttpResponse.BodyHandlers.ofString()).join();
            if (reply.statusCode() == 200 && json(reply).get("rounds").asLong() >= rounds) {
                return;
            }
            assertThat(System.nanoTime()).as("group %s on rank %d reaching %d rounds: %s", group, rank, rounds, reply.body())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /** Group {@code name} of both ranks, made on both. */
    private static void makeGroup(String name) {
        List<CompletableFuture<HttpResponse<String>>> made = List.of(
                post(0, "/v1/groups?timeout=30s", "{\"name\":\"" + name + "\",\"ranks\":[0,1]}"),
                post(1, "/v1/groups?timeout=30s", "{\"name\":\"" + name + "\",\"ranks\":[0,1]}"));
        made.forEach(m -> assertThat(m.join().statusCode()).as(m.join().body()).isEqualTo(201));
    }

    private static String reduceBody(long value) {
        return "{\"dtype\":\"int64\",\"op\":\"sum\",\"values\":[" + value + "]}";
    }

    /** One collective: its path after the group, the body rank r sends in call i, and the answer right for call i. */
    record Op(String path, java.util.function.BiFunction<Integer, Integer, String> body, IntFunction<String> answer,
            java.util.function.Function<JsonNode, String> read) {
    }

    private static Op allReduce(long scale) {
        return new Op("all-reduce", (rank, i) -> reduceBody(scale * i * (rank + 1)), i -> "[" + (3 * scale * i) + "]",
                reply -> reply.get("values").toString());
    }

    private static Op allGather(String who) {
        return new Op("all-gather", (rank, i) -> "{\"value\":\"" + who + i + "@" + rank + "\"}",
                i -> "[\"" + who + i + "@0\",\"" + who + i + "@1\"]", reply -> reply.get("values").toString());
    }

    private static Op broadcast(String who) {
        return broadcast(who, 0);
    }

    private static Op broadcast(String who, int root) {
        return new Op("broadcast?root=" + root, (rank, i) -> "{\"value\":\"" + who + i + "\"}", i -> "\"" + who + i + "\"",
                reply -> reply.get("value").toString());
    }

    private static Op barrier() {
        return new Op("barrier", (rank, i) -> null, i -> "passed", reply -> "passed");
    }

    private static String withQuery(String path, String query) {
        return path + (path.contains("?") ? "&" : "?") + query;
    }

    /**
     * The issue's first row, for every collective: on each rank two threads of the workload call the
     * same group at once, {@code calls} times each, each thread with its own tag as the API asks of
     * concurrent callers. Every answer must be 200 and exactly the thread's own.
     */
    private static void twoThreadsPerRankAtOnce(String group, Op a, Op b, int calls) throws Exception {
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            for (String tag : List.of("A", "B")) {
                Op op = tag.equals("A") ? a : b;
                int r = rank;
                threads.add(new Thread(() -> {
                    for (int i = 1; i <= calls; i++) {
                        HttpResponse<String> reply = post(r, "/v1/groups/" + group + "/" + withQuery(op.path(), "tag=" + tag + "&timeout=30s"),
                                op.body().apply(r, i)).join();
                        String got = reply.statusCode() == 200 ? op.read().apply(json(reply)) : null;
                        if (reply.statusCode() != 200 || !op.answer().apply(i).equals(got)) {
                            wrong.add("rank " + r + " thread " + tag + " call " + i + ": " + reply.statusCode() + " " + reply.body());
                        }
                    }
                }, "rank" + rank + "-" + tag));
            }
        }
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(120).toMillis());
            assertThat(t.isAlive()).as("thread %s ended", t.getName()).isFalse();
        }
        assertThat(wrong).as("answers that were not the caller's own").isEmpty();
    }

    @Test
    void concurrentCallersWithTheirOwnTagsEachGetTheirOwnAllReduce() throws Exception {
        makeGroup("threads-reduce");
        twoThreadsPerRankAtOnce("threads-reduce", allReduce(1), allReduce(1000), 30);
    }

    @Test
    void concurrentCallersWithTheirOwnTagsEachGetTheirOwnGatherBroadcastAndBarrier() throws Exception {
        makeGroup("threads-other");
        twoThreadsPerRankAtOnce("threads-other", allGather("A"), allGather("B"), 10);
        twoThreadsPerRankAtOnce("threads-other", broadcast("A"), broadcast("B"), 10);
        twoThreadsPerRankAtOnce("threads-other", barrier(), barrier(), 10);
    }

    @Test
    void aSecondCallOnALaneInFlightIs409AtOnceAndTheFirstStillPairs() throws Exception {
        makeGroup("busy");
        CompletableFuture<HttpResponse<String>> first = post(0, "/v1/groups/busy/all-reduce?timeout=30s", reduceBody(7));
        // Until rank 0's call holds the lane (its round taken), a second one could still be the first to take it.
        awaitRounds(0, "busy", 1);
        HttpResponse<String> second = post(0, "/v1/groups/busy/all-reduce?timeout=30s", reduceBody(8)).join();
        assertThat(second.statusCode()).as(second.body()).isEqualTo(409);
        assertThat(json(second).get("detail").asText()).contains("group 'busy' on rank 0 already has a call in flight (all-reduce")
                .contains("?tag=");
        HttpResponse<String> peer = post(1, "/v1/groups/busy/all-reduce?timeout=30s", reduceBody(9)).join();
        assertThat(json(peer).get("values").toString()).as(peer.body()).isEqualTo("[16]");
        assertThat(json(first.join()).get("values").toString()).isEqualTo("[16]");
        // The refusal took nothing from the group: the next call pairs as usual.
        List<CompletableFuture<HttpResponse<String>>> next = List.of(post(0, "/v1/groups/busy/all-reduce", reduceBody(1)),
                post(1, "/v1/groups/busy/all-reduce", reduceBody(2)));
        next.forEach(n -> assertThat(json(n.join()).get("values").toString()).as(n.join().body()).isEqualTo("[3]"));
    }

    /**
     * The issue's second row, for every collective: rank 0 calls alone and gets its 504; then both ranks
     * call four times together. No 200 may come back (today rank 1 got a sum of another round each
     * time): every answer is 409 saying since which round the group is out of step, on both ranks.
     */
    private static void afterA504EveryCallIs409OnBothRanks(String group, Op op) {
        makeGroup(group);
        HttpResponse<String> alone = post(0, "/v1/groups/" + group + "/" + withQuery(op.path(), "timeout=1s"), op.body().apply(0, 0)).join();
        assertThat(alone.statusCode()).as(alone.body()).isEqualTo(504);
        for (int i = 1; i <= 4; i++) {
            int call = i;
            List<CompletableFuture<HttpResponse<String>>> both = List.of(
                    post(0, "/v1/groups/" + group + "/" + withQuery(op.path(), "timeout=5s"), op.body().apply(0, i)),
                    post(1, "/v1/groups/" + group + "/" + withQuery(op.path(), "timeout=5s"), op.body().apply(1, i)));
            for (int r = 0; r < 2; r++) {
                HttpResponse<String> reply = both.get(r).join();
                assertThat(reply.statusCode()).as("%s call %d on rank %d: %s", op.path(), call, r, reply.body()).isEqualTo(409);
                assertThat(json(reply).get("detail").asText()).contains("out of step since round 0").contains("make a new group");
            }
        }
    }

    @Test
    void afterA504NoAllReduceAnswersWithAStaleSum() {
        afterA504EveryCallIs409OnBothRanks("late-reduce", new Op("all-reduce", (rank, i) -> reduceBody(10L * i * (rank + 1)),
                i -> "[" + 30 * i + "]", reply -> reply.get("values").toString()));
    }

    @Test
    void afterA504NoBarrierBroadcastOrAllGatherAnswers() {
        afterA504EveryCallIs409OnBothRanks("late-barrier", barrier());
        // Rank 0 alone as a reader (the root, rank 1, waits for nobody and so never times out).
        afterA504EveryCallIs409OnBothRanks("late-broadcast", broadcast("v", 1));
        afterA504EveryCallIs409OnBothRanks("late-gather", allGather("v"));
    }

    @Test
    void aNewGroupOfTheSameMembersWorksAfterTheOldOneWentOutOfStep() {
        afterA504EveryCallIs409OnBothRanks("broken", allReduce(1));
        makeGroup("mended");
        List<CompletableFuture<HttpResponse<String>>> both = List.of(post(0, "/v1/groups/mended/all-reduce", reduceBody(10)),
                post(1, "/v1/groups/mended/all-reduce", reduceBody(20)));
        both.forEach(b -> assertThat(json(b.join()).get("values").toString()).as(b.join().body()).isEqualTo("[30]"));
    }

    @Test
    void aTagThatIsNotAllowedIs400NamingIt() {
        makeGroup("tags");
        HttpResponse<String> bad = post(0, "/v1/groups/tags/barrier?tag=a/b", null).join();
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad).get("detail").asText()).contains("?tag=a/b is not allowed");
    }
}
