package io.symmem.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real world of two `serve` ranks (the packaged application): rank 0 hosts the store in its process,
 * rank 1 reaches it over TCP. Each rank serves HTTP on its own port.
 */
final class TwoRankWorld implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final int base;
    private final int management;
    private final List<RankProcess> ranks;

    private TwoRankWorld(int base, int management, List<RankProcess> ranks) {
        this.base = base;
        this.management = management;
        this.ranks = ranks;
    }

    /** Starts both ranks and waits (up to a minute) until both are ready. */
    static TwoRankWorld start(String name) throws Exception {
        return start(name, Map.of());
    }

    /** As {@link #start(String)}, with {@code extra} in both ranks' environment (e.g. SYMMEM_API_TOKEN). */
    static TwoRankWorld start(String name, Map<String, String> extra) throws Exception {
        int store = Ports.free();
        int base = Ports.freeBlock(2);
        int management = Ports.freeBlock(2);
        RankProcess rank0 = null;
        RankProcess rank1 = null;
        try {
            Map<String, String> env0 = env(0, store, base, management);
            Map<String, String> env1 = env(1, store, base, management);
            env0.putAll(extra);
            env1.putAll(extra);
            rank0 = RankProcess.start(name + "-0", env0, "serve");
            rank1 = RankProcess.start(name + "-1", env1, "serve");
            TwoRankWorld world = new TwoRankWorld(base, management, List.of(rank0, rank1));
            world.awaitReady(Duration.ofSeconds(90));
            return world;
        } catch (Exception | AssertionError e) {
            if (rank0 != null) {
                rank0.close();
            }
            if (rank1 != null) {
                rank1.close();
            }
            throw e;
        }
    }

    private static Map<String, String> env(int rank, int store, int base, int management) {
        return new HashMap<>(Map.of("WORLD_SIZE", "2", "RANK", Integer.toString(rank),
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(store), "SYMMEM_HTTP_PORT", Integer.toString(base),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(management)));
    }

    private void awaitReady(Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        for (int rank = 0; rank < ranks.size(); rank++) {
            while (true) {
                try {
                    if (RawHttp.exchange(managementPort(rank), "GET", "/q/health/ready", Map.of(), null).status() == 200) {
                        break;
                    }
                } catch (IOException starting) {
                    // not listening yet
                }
                if (System.nanoTime() > deadline || !ranks.get(rank).isAlive()) {
                    throw new AssertionError("rank " + rank + " never became ready:\n" + ranks.get(rank).output());
                }
                Thread.sleep(200);
            }
        }
    }

    int port(int rank) {
        return base + rank;
    }

    /** Where the rank serves health and metrics. */
    int managementPort(int rank) {
        return management + rank;
    }

    String output(int rank) {
        return ranks.get(rank).output();
    }

    /** SIGTERM to one rank, as Kubernetes stops a pod; its exit code. */
    int terminate(int rank, long seconds) throws InterruptedException {
        return ranks.get(rank).terminate(seconds);
    }

    boolean isAlive(int rank) {
        return ranks.get(rank).isAlive();
    }

    /** The WAITs the store server holds unanswered now (rank 0 hosts it), from /v1/store/stats. */
    int pendingWaits() throws IOException {
        return storeStats().get("pendingWaits").asInt();
    }

    /** Requests of one type the store server has served (e.g. "PING"), from /v1/store/stats. */
    long opsServed(String type) throws IOException {
        return storeStats().path("opsServed").path(type).asLong(0);
    }

    private JsonNode storeStats() throws IOException {
        RawHttp.Reply stats = RawHttp.exchange(port(0), "GET", "/v1/store/stats", Map.of(), null);
        if (stats.status() != 200) {
            throw new AssertionError("GET /v1/store/stats answered " + stats.status() + ": " + stats.body());
        }
        return json(stats.body());
    }

    /** Polls {@link #pendingWaits()} until it is {@code count}; fails after a generous deadline. */
    void awaitPendingWaits(int count, String why) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int now;
        while ((now = pendingWaits()) != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(why + ": the store holds " + now + " pending waits, expected " + count);
            }
            Thread.sleep(50);
        }
    }

    static JsonNode json(String text) throws IOException {
        return JSON.readTree(text);
    }

    @Override
    public void close() {
        ranks.forEach(RankProcess::close);
    }
}
