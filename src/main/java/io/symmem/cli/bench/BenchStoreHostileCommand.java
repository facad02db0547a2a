package io.symmem.cli.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.store.StoreLimits;
import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.StoreConnectionStats;
import io.symmem.store.server.StoreServer;
import io.symmem.store.server.StoreStats;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "store-hostile", description = {
        "What a careless or hostile client does to everyone else's store latency and to the store's memory.",
        "Well-behaved clients PING on a fixed schedule throughout.",
        "Meanwhile (1) one client streams a big MULTI_SET (65,536 x 1 KiB by default) in 64 KiB writes.",
        "Then (2) one client sends many GETs of a 1 MiB value and never reads the answers.",
        "Reports the pingers' p50/p99 per phase, how long the big frame took to apply, the answer bytes the server queues "
                + "for the client that does not read (its own count, StoreServer.connectionStats) and when it closes that client.",
        "The in-process server runs with the bounds set here."},
        footer = {"%nExamples:", "  symmem bench store-hostile", "  symmem bench store-hostile --keys 16384 --json hostile.json"})
public class BenchStoreHostileCommand implements Callable<Integer> {
    @Inject
    Vertx vertx;

    @Option(names = "--ping-clients", defaultValue = "2", description = "Well-behaved clients pinging meanwhile (default ${DEFAULT-VALUE}).")
    int pingClients;

    @Option(names = "--ping-interval-us", defaultValue = "1000", description = "Each pinger's schedule (default ${DEFAULT-VALUE}).")
    long pingIntervalMicros;

    @Option(names = "--baseline-seconds", defaultValue = "2", description = "Pings with nothing else going on, for comparison (default ${DEFAULT-VALUE}).")
    int baselineSeconds;

    @Option(names = "--big-frames", defaultValue = "3", description = "How many times the big MULTI_SET is sent, one after the other (default ${DEFAULT-VALUE}).")
    int bigFrames;

    @Option(names = "--keys", defaultValue = "65536", description = "Keys of the big MULTI_SET; 0 skips it (default ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--value-bytes", defaultValue = "1024", description = "Value size of the big MULTI_SET (default ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--write-bytes", defaultValue = "65536", description = "The big frame is written in pieces of this size (default ${DEFAULT-VALUE}).")
    int writeBytes;

    @Option(names = "--slow-gets", defaultValue = "2000", description = "GETs the non-reading client sends; 0 skips that phase (default ${DEFAULT-VALUE}).")
    int slowGets;

    @Option(names = "--slow-value-bytes", defaultValue = "1048576", description = "Size of the value it asks for (default ${DEFAULT-VALUE}).")
    int slowValueBytes;

    @Option(names = "--slow-seconds", defaultValue = "5", description = "How long the non-reading client is watched (default ${DEFAULT-VALUE}).")
    int slowSeconds;

    @Option(names = "--answer-queue-bytes", defaultValue = "" + StoreLimits.DEFAULT_ANSWER_QUEUE_BYTES,
            description = "The server's soft bound on a connection's unsent answers (default ${DEFAULT-VALUE}, the server's default).")
    long answerQueueBytes;

    @Option(names = "--answer-queue-close-bytes", defaultValue = "" + StoreLimits.DEFAULT_ANSWER_QUEUE_CLOSE_BYTES,
            description = "The server's hard bound on a connection's queued answer bytes (default ${DEFAULT-VALUE}, the server's default).")
    long answerQueueCloseBytes;

    @Option(names = "--drain-timeout-seconds", defaultValue = "10",
            description = "The server's time limit for a connection that does not drain (default ${DEFAULT-VALUE}; the server's own default is 60).")
    int drainTimeoutSeconds;

    @Option(names = "--json", description = "Also write the figures to this file.")
    Path json;

    private final Map<String, Object> figures = new LinkedHashMap<>();
    private int failures;

    @Override
    public Integer call() throws Exception {
        StoreLimits limits = StoreLimits.defaults().withAnswerQueue(answerQueueBytes, answerQueueCloseBytes,
                Duration.ofSeconds(drainTimeoutSeconds));
        StoreServer server = new StoreServer(vertx, "127.0.0.1", 0, limits);
        int port = server.start().await().atMost(Duration.ofSeconds(30));
        figures.put("date", Instant.now().toString());
        figures.put("cpus", Runtime.getRuntime().availableProcessors());
        figures.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        figures.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
        figures.put("server_loop", server.loopDescription());
        System.out.printf(Locale.ROOT, "symmem bench store-hostile: in-process server on 127.0.0.1:%d (%s), %d cpus, max heap %d MiB%n",
                port, server.loopDescription(), Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);
        System.out.printf(Locale.ROOT, "%d pinger(s), one PING each every %d us; server bounds: %d B unsent (soft), %d B queued (hard), %d s without draining%n",
                pingClients, pingIntervalMicros, answerQueueBytes, answerQueueCloseBytes, drainTimeoutSeconds);
        figures.put("answer_queue_bytes", answerQueueBytes);
        figures.put("answer_queue_close_bytes", answerQueueCloseBytes);
        figures.put("drain_timeout_s", drainTimeoutSeconds);
        try (BlockingStoreClient control = BlockingStoreClient.connect("127.0.0.1", port, Duration.ofSeconds(30),
                TcpStoreClient.Options.defaults())) {
            BenchPingers pingers = new BenchPingers("127.0.0.1", port, pingClients, Duration.ofNanos(pingIntervalMicros * 1_000));
            Thread.sleep(1000); // untimed: connections settle, the JIT compiles the ping paths
            long baselineFrom = System.nanoTime();
            Thread.sleep(baselineSeconds * 1000L);
            long baselineTo = System.nanoTime();
            List<long[]> bigFrame = keys > 0 && bigFrames > 0 ? bigFrames(port, control) : null;
            long[] slow = slowGets > 0 ? slowReader(server, port) : null;
            pingers.close();
            report("baseline", pingers.between(baselineFrom, baselineTo));
            BenchPingers.Window duringBigFrames = bigFrame != null ? report("big_frame", pingers.within(bigFrame)) : null;
            if (slow != null) {
                report("slow_reader", pingers.between(slow[0], slow[1]));
            }
            targets(duringBigFrames);
        } finally {
            server.stop().await().atMost(Duration.ofSeconds(30));
        }
        if (json != null) {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(json.toFile(), figures);
            System.out.println("wrote " + json);
        }
        return failures == 0 ? 0 : 1;
    }

    /** Phase 1: the big frame, {@code bigFrames} times; returns the windows [first byte sent, frame applied]. */
    private List<long[]> bigFrames(int port, BlockingStoreClient control) throws IOException {
        long keysBefore = control.numKeys().await().atMost(Duration.ofSeconds(30));
        List<long[]> windows = new ArrayList<>();
        List<Object> applied = new ArrayList<>();
        long frameBytes = 0;
        System.out.println();
        for (int round = 0; round < bigFrames; round++) {
            try (HostileStoreSocket big = new HostileStoreSocket("127.0.0.1", port)) {
                big.readTimeoutMillis(300_000);
                long from = System.nanoTime();
                frameBytes = big.multiSetInWrites("/hostile/big/", keys, valueBytes, writeBytes); // same keys: replaced each round
                long sent = System.nanoTime();
                big.ping(7);
                long done = System.nanoTime();
                System.out.printf(Locale.ROOT, "big frame %d: MULTI_SET of %d keys x %d B = %.1f MB in %d-byte writes: sent in %.3f s, applied after %.3f s%n",
                        round + 1, keys, valueBytes, frameBytes / 1e6, writeBytes, (sent - from) / 1e9, (done - from) / 1e9);
                windows.add(new long[] {from, done});
                applied.add(round((done - from) / 1e9));
            }
        }
        long keysAfter = control.numKeys().await().atMost(Duration.ofSeconds(30));
        if (keysAfter - keysBefore != keys) {
            error("the store holds " + (keysAfter - keysBefore) + " new keys after the MULTI_SETs of " + keys);
        }
        figures.put("big_frame_bytes", frameBytes);
        figures.put("big_frame_write_bytes", writeBytes);
        figures.put("big_frame_applied_s", applied);
        return windows;
    }

    /**
     * Phase 2: a client that asks for big answers and reads none. Watched for {@code slowSeconds}
     * (the window of the pings), then until the server closes it (at most the drain time limit + 30 s).
     */
    private long[] slowReader(StoreServer server, int port) throws IOException, InterruptedException {
        long heapBefore = usedHeapAfterGc();
        long directBefore = nettyDirectBytes();
        HostileStoreSocket slow = new HostileStoreSocket("127.0.0.1", port);
        long from = System.nanoTime();
        slow.set("/hostile/slow", new byte[slowValueBytes]);
        slow.getRepeatedly("/hostile/slow", slowGets);
        System.out.printf(Locale.ROOT, "%nslow reader: %d GETs of a %d-byte value sent in one write (%.1f MiB of answers), none read; watched for %d s%n",
                slowGets, slowValueBytes, (double) slowGets * slowValueBytes / 1048576, slowSeconds);
        long peakDirect = 0;
        long peakQueued = 0;
        long peakUnsent = 0;
        boolean paused = false;
        long end = from + Duration.ofSeconds(slowSeconds).toNanos();
        while (System.nanoTime() - end < 0) {
            Thread.sleep(100);
            for (StoreConnectionStats c : server.connectionStats().await().atMost(Duration.ofSeconds(30))) {
                peakQueued = Math.max(peakQueued, c.answerBytesQueued());
                peakUnsent = Math.max(peakUnsent, c.answerBytesUnsent());
                paused |= c.readingPaused();
            }
            peakDirect = Math.max(peakDirect, nettyDirectBytes() - directBefore);
        }
        long to = System.nanoTime();
        // One full GC, after the pingers' window: the heap the server still holds for the client.
        long heldHeap = usedHeapAfterGc() - heapBefore;
        System.out.printf(Locale.ROOT, "  server's count: answer bytes queued peak %.2f MiB, unsent peak %.2f MiB (bounds: %.0f MiB soft, %.0f MiB hard); reading paused: %s%n",
                peakQueued / 1048576.0, peakUnsent / 1048576.0, answerQueueBytes / 1048576.0, answerQueueCloseBytes / 1048576.0, paused ? "yes" : "no");
        System.out.printf(Locale.ROOT, "  process: heap held after a full GC at the end, above the level before: %.1f MiB; Netty direct memory, peak %.1f MiB%n",
                heldHeap / 1048576.0, peakDirect / 1048576.0);
        long closeDeadline = from + Duration.ofSeconds(drainTimeoutSeconds + 30L).toNanos();
        StoreStats stats = server.stats().await().atMost(Duration.ofSeconds(30));
        while (stats.connectionsClosedStuck() == 0 && System.nanoTime() - closeDeadline < 0) {
            Thread.sleep(100);
            stats = server.stats().await().atMost(Duration.ofSeconds(30));
        }
        double closedAfter = (System.nanoTime() - from) / 1e9;
        if (stats.connectionsClosedStuck() > 0) {
            System.out.printf(Locale.ROOT, "  closed by the server %.1f s after its requests (time limit %d s without draining)%n", closedAfter, drainTimeoutSeconds);
        } else {
            error("the server did not close the client that reads nothing within " + (drainTimeoutSeconds + 30) + " s");
        }
        figures.put("slow_gets", slowGets);
        figures.put("slow_value_bytes", slowValueBytes);
        figures.put("slow_queued_peak_bytes", peakQueued);
        figures.put("slow_unsent_peak_bytes", peakUnsent);
        figures.put("slow_reading_paused", paused);
        figures.put("slow_closed_after_s", stats.connectionsClosedStuck() > 0 ? round(closedAfter) : null);
        figures.put("slow_heap_held_mib", round(heldHeap / 1048576.0));
        figures.put("slow_direct_peak_mib", round(peakDirect / 1048576.0));
        slow.close();
        return new long[] {from, to};
    }

    /** The targets, printed last: others' latency during the big frame, and the bounds on the slow reader. */
    private void targets(BenchPingers.Window duringBigFrames) {
        System.out.println("targets:");
        if (duringBigFrames != null) {
            double p99Ms = duringBigFrames.fromDue().p99Us() / 1000;
            verdict(String.format(Locale.ROOT, "others' PING p99 during the big frames < 100 ms: %.1f ms from due time (%.1f ms round trip)",
                    p99Ms, duringBigFrames.roundTrip().p99Us() / 1000), p99Ms < 100);
        }
        Object queued = figures.get("slow_queued_peak_bytes");
        if (queued != null) {
            long peak = (Long) queued;
            verdict(String.format(Locale.ROOT, "answer bytes queued for the client that reads nothing <= soft bound + 64 KiB: peak %.2f MiB",
                    peak / 1048576.0), peak <= answerQueueBytes + 64 * 1024);
            verdict("that client closed by the server", figures.get("slow_closed_after_s") != null);
        }
    }

    private static void verdict(String what, boolean met) {
        System.out.println("  " + (met ? "MET    " : "MISSED ") + what);
    }

    private BenchPingers.Window report(String phase, BenchPingers.Window w) {
        System.out.printf(Locale.ROOT, "%-12s pings %6d  round trip p50 %9.1f us  p99 %10.1f us  max %10.1f us | from due time p50 %9.1f us  p99 %10.1f us  max %10.1f us%n",
                phase, w.roundTrip().count(), w.roundTrip().p50Us(), w.roundTrip().p99Us(), w.roundTrip().maxUs(),
                w.fromDue().p50Us(), w.fromDue().p99Us(), w.fromDue().maxUs());
        if (w.errors() > 0) {
            error(phase + ": " + w.errors() + " pings failed, first: " + w.firstError());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pings", w.roundTrip().count());
        m.put("rtt_p50_us", round(w.roundTrip().p50Us()));
        m.put("rtt_p99_us", round(w.roundTrip().p99Us()));
        m.put("rtt_max_us", round(w.roundTrip().maxUs()));
        m.put("due_p50_us", round(w.fromDue().p50Us()));
        m.put("due_p99_us", round(w.fromDue().p99Us()));
        m.put("due_max_us", round(w.fromDue().maxUs()));
        figures.put("pings_" + phase, m);
        return w;
    }

    private void error(String text) {
        failures++;
        System.out.println("ERROR: " + text);
    }

    private static long usedHeapAfterGc() {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    /** Direct memory Netty allocated (pooled or not), where answers wait for the socket. */
    private static long nettyDirectBytes() {
        long used = io.netty.util.internal.PlatformDependent.usedDirectMemory();
        if (used >= 0) {
            return used;
        }
        return ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).mapToLong(java.lang.management.BufferPoolMXBean::getMemoryUsed).sum();
    }

    private static Object round(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 1000) / 1000.0;
    }
}
