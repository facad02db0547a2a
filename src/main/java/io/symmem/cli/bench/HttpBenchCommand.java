package io.symmem.cli.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.service.RankRuntime;
import io.symmem.service.groups.SmallReduce;
import io.symmem.store.StoreExchange;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code symmem bench http}: what the sidecar's control plane costs a process in the pod. Each rank
 * calls its own sidecar over loopback HTTP (as a PyTorch process beside it would: one keep-alive
 * connection, one call at a time, through a minimal HTTP/1.1 client so that the figures are the
 * sidecar's and not a client library's) for a barrier and a small all-reduce on the world, then does
 * the same through the Java API (the group's StoreExchange, as the sidecar itself does, without HTTP).
 * Latency per call on each rank; the table shows, per phase, the slowest rank's p50 and p99.
 */
@Command(name = "http", description = "Barrier and small all-reduce latency over the sidecar's HTTP API beside the same through the"
        + " Java API (StoreExchange), every rank calling its own sidecar. Run one per rank: symmem launch -n 4 bench http.")
public class HttpBenchCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    RankRuntime runtime;
    @ConfigProperty(name = "quarkus.http.port")
    int httpPort;

    @Option(names = "--iters", defaultValue = "500", description = "Timed calls per phase (default ${DEFAULT-VALUE}).")
    int iters;

    @Option(names = "--warmup", defaultValue = "100", description = "Untimed calls before each phase (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--values", defaultValue = "16", description = "float64 values in the all-reduce (default ${DEFAULT-VALUE}).")
    int values;

    /** One phase's figures on one rank. */
    record Phase(String name, double p50Us, double p99Us, double meanUs) {
    }

    @Override
    public Integer call() throws Exception {
        int rank = runtime.config().rank();
        if (iters < 1 || warmup < 0 || values < 1 || values > SmallReduce.MAX_VALUES) {
            System.err.println("symmem bench http: --iters must be at least 1, --warmup at least 0, --values 1.."
                    + SmallReduce.MAX_VALUES);
            return 2;
        }
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            Duration timeout = runtime.config().timeout().rendezvous();
            String reduceBody = reduceBody(rank);
            LoopbackHttp http = new LoopbackHttp(httpPort);
            StoreExchange java = runtime.exchange("bench-http-java", rank, runtime.config().worldSize());
            byte[] contribution = SmallReduce.encode(SmallReduce.parse(JSON.readTree(reduceBody)));
            List<Phase> phases = new ArrayList<>();
            phases.add(measure("barrier, HTTP", () -> post(http, "/v1/groups/world/barrier?timeout=" + timeout.toSeconds() + "s", null)));
            phases.add(measure("barrier, Java API", () -> java.barrier(timeout).await().atMost(timeout.plusSeconds(5))));
            phases.add(measure("all-reduce " + values + " x float64, HTTP",
                    () -> post(http, "/v1/groups/world/all-reduce?timeout=" + timeout.toSeconds() + "s", reduceBody)));
            phases.add(measure("all-reduce " + values + " x float64, Java API",
                    () -> java.allGather(contribution, timeout).await().atMost(timeout.plusSeconds(5))));
            http.close();
            report(phases, timeout);
            runtime.leave();
            return 0;
        } catch (RuntimeException | java.io.IOException e) {
            System.err.println("symmem bench http: rank " + rank + " FAILED: " + e.getMessage());
            return 1;
        }
    }

    private String reduceBody(int rank) {
        StringBuilder b = new StringBuilder("{\"dtype\":\"float64\",\"op\":\"sum\",\"values\":[");
        for (int i = 0; i < values; i++) {
            b.append(i == 0 ? "" : ",").append(rank + i * 0.5);
        }
        return b.append("]}").toString();
    }

    private interface Call {
        void run() throws Exception;
    }

    private Phase measure(String name, Call call) throws Exception {
        for (int i = 0; i < warmup; i++) {
            call.run();
        }
        long[] samples = new long[iters];
        for (int i = 0; i < iters; i++) {
            long t0 = System.nanoTime();
            call.run();
            samples[i] = System.nanoTime() - t0;
        }
        BenchStats s = BenchStats.of(samples, iters);
        return new Phase(name, s.p50Us(), s.p99Us(), s.meanUs());
    }

    private static void post(LoopbackHttp http, String target, String body) throws java.io.IOException {
        LoopbackHttp.Reply reply = http.post(target, body);
        if (reply.status() != 200) {
            throw new IllegalStateException("POST " + target + " answered " + reply.status() + ": " + reply.body());
        }
    }

    /** Every rank's figures to rank 0, which prints the slowest rank's per phase. */
    private void report(List<Phase> phases, Duration timeout) throws Exception {
        int rank = runtime.config().rank();
        StoreExchange report = runtime.exchange("bench-http-report", rank, runtime.config().worldSize());
        List<byte[]> all = report.allGather(JSON.writeValueAsBytes(phases), timeout).await().atMost(timeout.plusSeconds(5));
        if (rank != 0) {
            return;
        }
        System.out.printf(Locale.ROOT, "symmem bench http: world %d, %d calls per phase after %d warm-up, each rank calling its own "
                + "sidecar on 127.0.0.1; the slowest rank's figures (us)%n", runtime.config().worldSize(), iters, warmup);
        System.out.printf(Locale.ROOT, "%-36s %10s %10s %10s%n", "phase", "p50", "p99", "mean");
        for (int p = 0; p < phases.size(); p++) {
            double p50 = 0;
            double p99 = 0;
            double mean = 0;
            for (byte[] theirs : all) {
                Phase ph = JSON.readValue(new String(theirs, StandardCharsets.UTF_8), Phase[].class)[p];
                p50 = Math.max(p50, ph.p50Us());
                p99 = Math.max(p99, ph.p99Us());
                mean = Math.max(mean, ph.meanUs());
            }
            System.out.printf(Locale.ROOT, "%-36s %10.1f %10.1f %10.1f%n", phases.get(p).name(), p50, p99, mean);
        }
    }
}
