package io.symmem.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.store.BlockingStoreClient;
import io.symmem.store.StoreServer;
import io.symmem.store.StoreStats;
import io.symmem.store.TcpStoreClient;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "store-hostile", description = {
        "What a careless or hostile client does to everyone else's store latency and to the store's memory.",
        "Well-behaved clients PING on a fixed schedule throughout; meanwhile (1) one client streams a big MULTI_SET",
        "(65,536 x 1 KiB by default) in 64 KiB writes, then (2) one client sends many GETs of a 1 MiB value and",
        "never reads the answers. Reports the pingers' p50/p99 per phase, how long the big frame took to apply,",
        "and the memory the server holds for the client that does not read."},
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

    @Option(names = "--json", description = "Also write the figures to this file.")
    Path json;

    private final Map<String, Object> figures = new LinkedHashMap<>();
    private int failures;

    @Override
    public Integer call() throws Exception {
        StoreServer server = new StoreServer(vertx, "127.0.0.1", 0);
        int port = server.start().await().atMost(Duration.ofSeconds(30));
        figures.put("date", Instant.now().toString());
        figures.put("cpus", Runtime.getRuntime().availableProcessors());
        figures.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        figures.put("max_heap_mib", Runtime.getRuntime().maxMemory() >> 20);
        figures.put("server_loop", server.loopDescription());
        System.out.printf(Locale.ROOT, "symmem bench store-hostile: in-process server on 127.0.0.1:%d (%s), %d cpus, max heap %d MiB%n",
                port, server.loopDescription(), Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory() >> 20);
        System.out.printf(Locale.ROOT, "%d pinger(s), one PING each every %d us%n", pingClients, pingIntervalMicros);
        try (BlockingStoreClient control = BlockingStoreClient.connect("127.0.0.1", port, Duration.ofSeconds(30),
                TcpStoreClient.Options.defaults())) {
            BenchPingers pingers = new BenchPingers("127.0.0.1", port, pingClients, Duration.ofNanos(pingIntervalMicros * 1_000));
            Thread.sleep(1000); // untimed: connections settle, the JIT compiles the ping paths
            long baselineFrom = System.nanoTime();
            Thread.sleep(baselineSeconds * 1000L);
            long baselineTo = System.nanoTime();
            long[] bigFrame = keys > 0 ? bigFrame(port, control) : null;
            long[] slow = slowGets > 0 ? slowReader(server, port) : null;
            pingers.close();
            report("baseline", pingers.between(baselineFrom, baselineTo));
            if (bigFrame != null) {
                report("big_frame", pingers.between(bigFrame[0], bigFrame[1]));
            }
            if (slow != null) {
                report("slow_reader", pingers.between(slow[0], slow[1]));
            }
        } finally {
            server.stop().await().atMost(Duration.ofSeconds(30));
        }
        if (json != null) {
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(json.toFile(), figures);
            System.out.println("wrote " + json);
        }
        return failures == 0 ? 0 : 1;
    }

    /** Phase 1: returns the window [first byte sent, frame applied]. */
    private long[] bigFrame(int port, BlockingStoreClient control) throws IOException {
        long keysBefore = control.numKeys().await().atMost(Duration.ofSeconds(30));
        try (HostileStoreSocket big = new HostileStoreSocket("127.0.0.1", port)) {
            big.readTimeoutMillis(300_000);
            long from = System.nanoTime();
            long frameBytes = big.multiSetInWrites("/hostile/big/", keys, valueBytes, writeBytes);
            long sent = System.nanoTime();
            big.ping(7);
            long applied = System.nanoTime();
            long keysAfter = control.numKeys().await().atMost(Duration.ofSeconds(30));
            System.out.printf(Locale.ROOT, "%nbig frame: MULTI_SET of %d keys x %d B = %.1f MB in %d-byte writes: sent in %.3f s, applied after %.3f s%n",
                    keys, valueBytes, frameBytes / 1e6, writeBytes, (sent - from) / 1e9, (applied - from) / 1e9);
            if (keysAfter - keysBefore != keys) {
                error("the store holds " + (keysAfter - keysBefore) + " new keys after the MULTI_SET of " + keys);
            }
            figures.put("big_frame_bytes", frameBytes);
            figures.put("big_frame_write_bytes", writeBytes);
            figures.put("big_frame_sent_s", round((sent - from) / 1e9));
            figures.put("big_frame_applied_s", round((applied - from) / 1e9));
            return new long[] {from, applied};
        }
    }

    /** Phase 2: a client that asks for big answers and reads none; returns the window it was watched. */
    private long[] slowReader(StoreServer server, int port) throws IOException, InterruptedException {
        long heapBefore = usedHeapAfterGc();
        long directBefore = nettyDirectBytes();
        HostileStoreSocket slow = new HostileStoreSocket("127.0.0.1", port);
        long from = System.nanoTime();
        slow.set("/hostile/slow", new byte[slowValueBytes]);
        slow.getRepeatedly("/hostile/slow", slowGets);
        System.out.printf(Locale.ROOT, "%nslow reader: %d GETs of a %d-byte value sent in one write, answers never read; watched for %d s%n",
                slowGets, slowValueBytes, slowSeconds);
        long peakHeap = 0;
        long peakDirect = 0;
        long end = from + Duration.ofSeconds(slowSeconds).toNanos();
        while (System.nanoTime() - end < 0) {
            Thread.sleep(500);
            peakHeap = Math.max(peakHeap, usedHeapAfterGc() - heapBefore);
            peakDirect = Math.max(peakDirect, nettyDirectBytes() - directBefore);
        }
        long to = System.nanoTime();
        StoreStats stats = server.stats().await().atMost(Duration.ofSeconds(30));
        System.out.printf(Locale.ROOT, "  heap held (after GC, above the level before): peak %.1f MiB; Netty direct memory: peak %.1f MiB; open connections %d%n",
                peakHeap / 1048576.0, peakDirect / 1048576.0, stats.openConnections());
        figures.put("slow_gets", slowGets);
        figures.put("slow_value_bytes", slowValueBytes);
        figures.put("slow_heap_peak_mib", round(peakHeap / 1048576.0));
        figures.put("slow_direct_peak_mib", round(peakDirect / 1048576.0));
        slow.close();
        return new long[] {from, to};
    }

    private void report(String phase, BenchPingers.Window w) {
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
