package io.symmem.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * `symmem chaos --restart`: a world of `serve` ranks (separate processes, as pods run them) in which,
 * round after round, one rank is killed (SIGKILL) and started again with the same RANK, nothing else
 * touched; times from the restarted rank's start until every rank is ready again in the next generation
 * of the world (each rank's readiness, and its generation in /v1/world), and prints p50 and max.
 */
final class RestartRounds {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration POLL = Duration.ofMillis(10);

    private final int ranks;
    private final int storePort;
    private final int httpBase;
    private final int managementBase;
    private final long boundMs;
    private final Path logDir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Process> processes = new ArrayList<>();

    RestartRounds(int ranks, int storePort, int httpBase, int managementBase, long boundMs, Path logDir) {
        this.ranks = ranks;
        this.storePort = storePort;
        this.httpBase = httpBase;
        this.managementBase = managementBase;
        this.boundMs = boundMs;
        this.logDir = logDir;
    }

    /** Runs {@code rounds} rounds; prints a line per round and the summary; true if every round re-formed in time. */
    boolean run(int rounds, SplittableRandom random, Integer victim, PrintStream out) throws IOException, InterruptedException {
        try {
            for (int r = 0; r < ranks; r++) {
                processes.add(start(r, 0));
            }
            Long first = awaitWorld(0, System.nanoTime());
            if (first == null) {
                out.println("symmem chaos --restart: the world of " + ranks + " ranks never became ready (logs in " + logDir + ")");
                return false;
            }
            List<Long> times = new ArrayList<>();
            boolean allGood = true;
            for (int round = 1; round <= rounds; round++) {
                int dead = victim != null ? victim : random.nextInt(ranks);
                Process killed = processes.get(dead);
                killed.destroyForcibly();
                killed.waitFor(10, TimeUnit.SECONDS);
                long startedAt = System.nanoTime();
                processes.set(dead, start(dead, round));
                Long ms = awaitWorld(round, startedAt);
                if (ms == null) {
                    out.printf("round %3d: rank %d restarted; the world did NOT form again within %d ms (logs in %s)%n",
                            round, dead, boundMs, logDir);
                    allGood = false;
                    break;
                }
                times.add(ms);
                out.printf("round %3d: rank %d restarted; every rank ready in generation %d after %d ms%n", round, dead,
                        round, ms);
            }
            if (!times.isEmpty()) {
                List<Long> sorted = new ArrayList<>(times);
                sorted.sort(null);
                out.printf("symmem chaos --restart: %d ranks, %d rounds: restarted rank's start to every rank ready: "
                        + "p50 %d ms, max %d ms%n", ranks, times.size(), sorted.get((sorted.size() - 1) / 2),
                        sorted.get(sorted.size() - 1));
            }
            out.println("symmem chaos --restart: " + (allGood ? "PASS" : "FAIL"));
            return allGood;
        } finally {
            for (Process p : processes) {
                p.destroyForcibly();
            }
            for (Process p : processes) {
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private Process start(int rank, int life) throws IOException {
        ProcessBuilder builder = SelfCommand.localRank(List.of("serve"), rank, ranks, "127.0.0.1");
        builder.environment().put("MASTER_PORT", Integer.toString(storePort));
        builder.environment().put("SYMMEM_HTTP_PORT", Integer.toString(httpBase));
        builder.environment().put("SYMMEM_MANAGEMENT_PORT", Integer.toString(managementBase));
        builder.environment().putIfAbsent("SYMMEM_BACKEND", "host");
        File log = logDir.resolve("rank" + rank + "-life" + life + ".log").toFile();
        return builder.redirectOutput(log).start();
    }

    /**
     * Milliseconds from {@code since} until every rank answers ready in generation {@code generation} or
     * later (a survivor that has not yet noticed the loss is still ready in the old one: not counted);
     * null past the bound.
     */
    private Long awaitWorld(int generation, long since) throws InterruptedException {
        long deadline = since + TimeUnit.MILLISECONDS.toNanos(boundMs);
        int rank = 0;
        while (rank < ranks) {
            if (readyIn(rank, generation)) {
                rank++;
                continue;
            }
            if (System.nanoTime() > deadline) {
                return null;
            }
            Thread.sleep(POLL.toMillis());
            rank = 0;  // a rank found ready may have been lost since: all must be ready at one moment
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    private boolean readyIn(int rank, int generation) {
        try {
            HttpResponse<String> ready = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + (managementBase + rank) + "/q/health/ready")).timeout(Duration.ofSeconds(2))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (ready.statusCode() != 200) {
                return false;
            }
            JsonNode checks = JSON.readTree(ready.body()).path("checks");
            for (JsonNode check : checks) {
                if (check.path("data").has("generation")) {
                    return check.path("data").path("generation").asLong() >= generation;
                }
            }
            return false;
        } catch (IOException notUp) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static Path logDir(Path requested) throws IOException {
        return requested != null ? Files.createDirectories(requested) : Files.createTempDirectory("symmem-chaos-restart");
    }
}
