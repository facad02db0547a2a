package io.symmem.cli;

import io.symmem.collective.AllReduce;
import io.symmem.memory.SymmetricMemory;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/**
 * The demo every rank runs: one symmetric buffer, a one-shot all-reduce of random float32 data per
 * size, each result checked against a float64 reference computed here in Java (every rank can
 * regenerate every peer's input from its seed), timing agreed across ranks, a table on rank 0.
 */
final class AllReduceDemo {
    private static final int WARMUP_RUNS = 20;
    private static final int PROBE_RUNS = 10;
    private final RankRuntime runtime;
    private final List<Long> sizes;
    private final int minTimeMs;
    private final Map<Integer, Long> bytesOfRank;
    private final PrintStream out;
    private final int rank;
    private final int world;
    private final StoreExchange exchange;
    private final Duration timeout;

    AllReduceDemo(RankRuntime runtime, List<Long> sizes, int minTimeMs, Map<Integer, Long> bytesOfRank, PrintStream out) {
        this.runtime = runtime;
        this.sizes = sizes;
        this.minTimeMs = minTimeMs;
        this.bytesOfRank = bytesOfRank;
        this.out = out;
        this.rank = runtime.config().rank();
        this.world = runtime.config().worldSize();
        this.exchange = runtime.exchange("demo", rank, world);
        this.timeout = runtime.config().timeout().rendezvous();
    }

    record Row(long bytes, long iterations, double micros, String check) {
    }

    void run() {
        long maxBytes = sizes.stream().mapToLong(s -> roundToFloats(s)).max().orElseThrow();
        long allocBytes = bytesOfRank.getOrDefault(rank, maxBytes);
        List<Row> rows = new ArrayList<>();
        String verdict = "ok";
        try (SymmetricMemory memory = runtime.allocator().allocate(exchange, allocBytes, timeout)) {
            ByteBuffer result = ByteBuffer.allocateDirect((int) maxBytes).order(ByteOrder.nativeOrder());
            for (long size : sizes) {
                Row row = measure(memory, roundToFloats(size), result);
                rows.add(row);
                if (!row.check().equals("ok")) {
                    verdict = row.check();
                }
            }
        }
        List<String> verdicts = gatherStrings(verdict);
        boolean pass = verdicts.stream().allMatch("ok"::equals);
        if (rank == 0) {
            printTable(rows);
            for (int r = 0; r < verdicts.size(); r++) {
                if (!verdicts.get(r).equals("ok")) {
                    out.println("rank " + r + ": " + verdicts.get(r));
                }
            }
            out.println(pass ? "PASS" : "FAIL");
        }
        runtime.leave();
        if (!pass) {
            throw new IllegalStateException("all-reduce results were wrong on rank(s) " + failedRanks(verdicts));
        }
    }

    private Row measure(SymmetricMemory memory, long bytes, ByteBuffer result) {
        int count = (int) (bytes / Float.BYTES);
        float[][] inputs = new float[world][];
        for (int r = 0; r < world; r++) {
            inputs[r] = input(r, bytes, count);
        }
        memory.local().asFloatBuffer().put(inputs[rank]);
        AllReduce.sumFloat32(memory, count, result);
        String check = verify(result, inputs, count);
        // Warm-up runs (JIT, page faults, peers still arriving), then probe runs that decide how
        // many timed runs fill minTimeMs; ranks take the largest count so that every rank runs the
        // same number of collectives.
        for (int i = 0; i < WARMUP_RUNS; i++) {
            AllReduce.sumFloat32(memory, count, result);
        }
        long start = System.nanoTime();
        for (int i = 0; i < PROBE_RUNS; i++) {
            AllReduce.sumFloat32(memory, count, result);
        }
        double probeMicros = (System.nanoTime() - start) / 1e3 / PROBE_RUNS;
        long iterations = Math.max(10, (long) (minTimeMs * 1e3 / Math.max(probeMicros, 0.1)));
        iterations = gatherLongs(iterations).stream().mapToLong(Long::longValue).max().orElseThrow();
        start = System.nanoTime();
        for (long i = 0; i < iterations; i++) {
            AllReduce.sumFloat32(memory, count, result);
        }
        double micros = (System.nanoTime() - start) / 1e3 / iterations;
        if (check.equals("ok")) {
            check = verify(result, inputs, count);
        }
        double slowest = gatherStrings(Double.toString(micros)).stream().mapToDouble(Double::parseDouble).max().orElseThrow();
        String agreement = sameOnEveryRank(result, count);
        return new Row(bytes, iterations, slowest, check.equals("ok") ? agreement : check);
    }

    /** Rank r's input for one size: uniform in [-1, 1), reproducible on every rank. */
    static float[] input(int r, long bytes, int count) {
        SplittableRandom random = new SplittableRandom(0x5EED_0000L ^ (bytes * 1_000_003L) ^ (r * 7_919L));
        float[] values = new float[count];
        for (int i = 0; i < count; i++) {
            values[i] = (float) (random.nextDouble() * 2 - 1);
        }
        return values;
    }

    private static String verify(ByteBuffer result, float[][] inputs, int count) {
        FloatBuffer got = result.duplicate().order(ByteOrder.nativeOrder()).clear().asFloatBuffer();
        for (int i = 0; i < count; i++) {
            double reference = 0;
            double magnitude = 0;
            for (float[] input : inputs) {
                reference += input[i];
                magnitude += Math.abs(input[i]);
            }
            // float32 rounding of a sum of n terms stays within n ulps of the total magnitude.
            double tolerance = inputs.length * Math.ulp((float) magnitude) + 1e-30;
            if (Math.abs(got.get(i) - reference) > tolerance) {
                return "element " + i + " of " + count + " is " + got.get(i) + ", expected " + reference;
            }
        }
        return "ok";
    }

    private String sameOnEveryRank(ByteBuffer result, int count) {
        CRC32 crc = new CRC32();
        crc.update(result.duplicate().clear().limit(count * Float.BYTES));
        List<String> sums = gatherStrings(Long.toHexString(crc.getValue()));
        return sums.stream().distinct().count() == 1 ? "ok" : "ranks disagree on the result: checksums " + sums;
    }

    private List<String> gatherStrings(String value) {
        List<byte[]> all = exchange.allGather(value.getBytes(StandardCharsets.UTF_8), timeout)
                .await().atMost(timeout.plusSeconds(5));
        return all.stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }

    private List<Long> gatherLongs(long value) {
        return gatherStrings(Long.toString(value)).stream().map(Long::parseLong).toList();
    }

    private static long roundToFloats(long bytes) {
        return Math.max(Float.BYTES, bytes / Float.BYTES * Float.BYTES);
    }

    private static String failedRanks(List<String> verdicts) {
        List<Integer> failed = new ArrayList<>();
        for (int r = 0; r < verdicts.size(); r++) {
            if (!verdicts.get(r).equals("ok")) {
                failed.add(r);
            }
        }
        return failed.toString();
    }

    private void printTable(List<Row> rows) {
        out.printf("symmem all-reduce: one-shot, float32 sum, %d ranks, backend %s (%s)%n", world,
                runtime.backend().name(), runtime.backend().deviceName());
        out.printf("%10s %9s %12s %12s %12s  %s%n", "size", "runs", "latency us", "algbw GB/s", "busbw GB/s", "check");
        for (Row row : rows) {
            double algbw = row.bytes() / (row.micros() * 1e-6) / 1e9;
            double busbw = algbw * 2.0 * (world - 1) / world;
            out.printf("%10s %9d %12.1f %12.2f %12.2f  %s%n", ByteSizeConverter.format(row.bytes()), row.iterations(),
                    row.micros(), algbw, busbw, row.check());
        }
    }
}
