package io.symmem.cli;

import io.symmem.cli.common.HalfFloats;
import io.symmem.collective.AllReduce;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.config.ByteSize;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeGraph;
import io.symmem.nativ.NativeStream;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/**
 * The demo every rank runs: one symmetric buffer, an all-reduce (sum) of random data per size in
 * the chosen dtype and algorithm, each result checked against a float64 reference computed here in
 * Java (every rank can regenerate every peer's input from its seed), timing agreed across ranks, a
 * table on rank 0. Data go in with {@code copyFrom} and come back with {@code copyTo}, so the same
 * code runs on the host and the cuda backend. With {@code graph}, each size's all-reduce is captured
 * once into a CUDA graph and every run (the checks and the timed runs) is a replay of it, on new input
 * where the input changes (device backends only).
 */
final class AllReduceDemo {
    private static final int WARMUP_RUNS = 20;
    private static final int PROBE_RUNS = 10;
    private final RankRuntime runtime;
    private final List<Long> sizes;
    private final int minTimeMs;
    private final Map<Integer, Long> bytesOfRank;
    private final PrintStream out;
    private final DType dtype;
    private final Algorithm algo;
    private final boolean graph;
    private final int rank;
    private final int world;
    private final StoreExchange exchange;
    private final Duration timeout;
    private final Duration collectiveTimeout;

    AllReduceDemo(RankRuntime runtime, List<Long> sizes, int minTimeMs, Map<Integer, Long> bytesOfRank, DType dtype,
            Algorithm algo, boolean graph, PrintStream out) {
        this.runtime = runtime;
        this.sizes = sizes;
        this.minTimeMs = minTimeMs;
        this.bytesOfRank = bytesOfRank;
        this.dtype = dtype;
        this.algo = algo;
        this.graph = graph;
        this.out = out;
        this.rank = runtime.config().rank();
        this.world = runtime.config().worldSize();
        this.exchange = runtime.exchange("demo", rank, world);
        this.timeout = runtime.config().timeout().rendezvous();
        this.collectiveTimeout = runtime.config().timeout().collective();
    }

    record Row(long bytes, long iterations, double micros, String algorithm, String check) {
    }

    void run() {
        long maxBytes = sizes.stream().mapToLong(this::roundToElements).max().orElseThrow();
        long allocBytes = bytesOfRank.getOrDefault(rank, maxBytes);
        List<Row> rows = new ArrayList<>();
        String verdict = "ok";
        try (SymmetricMemory memory = runtime.allocator().allocate(exchange, allocBytes, timeout);
                LocalBuffer result = memory.allocateLocal(maxBytes);
                NativeStream stream = memory.createStream()) {
            if (graph && !memory.isDevice()) {
                throw new IllegalArgumentException("demo --graph: the " + runtime.allocator().backend().name()
                        + " backend has no CUDA graphs; use SYMMEM_BACKEND=cuda, nccl or nvshmem");
            }
            for (long size : sizes) {
                Row row = measure(memory, roundToElements(size), result, stream);
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

    /** Inputs of every rank as float64 (after rounding to dtype) and this rank's raw input. */
    private record Inputs(double[][] values, float[] mineF32, short[] mine16) {
    }

    private Inputs inputs(long bytes, int count) {
        double[][] values = new double[world][count];
        float[] mineF32 = null;
        short[] mine16 = null;
        for (int r = 0; r < world; r++) {
            float[] raw = input(r, bytes, count);
            short[] rounded = dtype == DType.FLOAT32 ? null : new short[count];
            for (int i = 0; i < count; i++) {
                switch (dtype) {
                    case FLOAT32 -> values[r][i] = raw[i];
                    case BFLOAT16 -> {
                        rounded[i] = HalfFloats.toBf16(raw[i]);
                        values[r][i] = HalfFloats.fromBf16(rounded[i]);
                    }
                    case FLOAT16 -> {
                        rounded[i] = HalfFloats.toFp16(raw[i]);
                        values[r][i] = HalfFloats.fromFp16(rounded[i]);
                    }
                }
            }
            if (r == rank) {
                mineF32 = raw;
                mine16 = rounded;
            }
        }
        return new Inputs(values, mineF32, mine16);
    }

    private void load(SymmetricMemory memory, Inputs in) {
        if (dtype == DType.FLOAT32) {
            memory.copyFrom(in.mineF32(), 0);
        } else {
            memory.copyFrom(in.mine16(), 0);
        }
    }

    private Row measure(SymmetricMemory memory, long bytes, LocalBuffer result, NativeStream stream) {
        int count = (int) (bytes / dtype.bytes());
        Runnable once = () -> reduce(memory, count, result, stream);
        if (!graph) {
            return measure(memory, bytes, count, result, stream, once);
        }
        try (NativeGraph captured = memory.captureGraph(stream, once)) {
            return measure(memory, bytes, count, result, stream, () -> captured.replay(stream));
        }
    }

    /** {@code run}: one all-reduce of {@code count} elements into {@code result}, enqueued on {@code stream}. */
    private Row measure(SymmetricMemory memory, long bytes, int count, LocalBuffer result, NativeStream stream,
            Runnable run) {
        Inputs in = inputs(bytes, count);
        load(memory, in);
        run.run();
        memory.synchronize(stream);
        ByteBuffer got = readBack(result, bytes);
        String check = verify(got, in.values(), count);
        // Warm-up runs (JIT, page faults, peers still arriving), then probe runs that decide how
        // many timed runs fill minTimeMs; ranks take the largest count so that every rank runs the
        // same number of collectives. Runs are enqueued back to back, then synchronised (cuda).
        for (int i = 0; i < WARMUP_RUNS; i++) {
            run.run();
        }
        memory.synchronize(stream);
        long start = System.nanoTime();
        for (int i = 0; i < PROBE_RUNS; i++) {
            run.run();
        }
        memory.synchronize(stream);
        double probeMicros = (System.nanoTime() - start) / 1e3 / PROBE_RUNS;
        long iterations = Math.max(10, (long) (minTimeMs * 1e3 / Math.max(probeMicros, 0.1)));
        iterations = gatherLongs(iterations).stream().mapToLong(Long::longValue).max().orElseThrow();
        memory.barrier(1);
        start = System.nanoTime();
        for (long i = 0; i < iterations; i++) {
            run.run();
        }
        memory.synchronize(stream);
        double micros = (System.nanoTime() - start) / 1e3 / iterations;
        // The timed runs reduced their own results (two-shot also uses the buffer as scratch):
        // reload the inputs and check once more.
        memory.barrier(1);
        load(memory, in);
        run.run();
        memory.synchronize(stream);
        got = readBack(result, bytes);
        if (check.equals("ok")) {
            check = verify(got, in.values(), count);
        }
        memory.barrier(1);
        double slowest = gatherStrings(Double.toString(micros)).stream().mapToDouble(Double::parseDouble).max().orElseThrow();
        String agreement = sameOnEveryRank(got);
        String used = (algo == Algorithm.AUTO ? "auto=" + AllReduce.autoAlgorithm(memory, dtype, count, false).id() : algo.id())
                + (graph ? " (graph)" : "");
        return new Row(bytes, iterations, slowest, used, check.equals("ok") ? agreement : check);
    }

    private void reduce(SymmetricMemory memory, int count, LocalBuffer result, NativeStream stream) {
        AllReduce.run(memory, algo, dtype, ReduceOp.SUM, count, result, stream, collectiveTimeout);
    }

    private static ByteBuffer readBack(LocalBuffer result, long bytes) {
        ByteBuffer got = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
        result.copyTo(got, 0);
        return got.flip();
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

    private String verify(ByteBuffer result, double[][] inputs, int count) {
        for (int i = 0; i < count; i++) {
            double reference = 0;
            double magnitude = 0;
            for (double[] input : inputs) {
                reference += input[i];
                magnitude += Math.abs(input[i]);
            }
            // fp32 accumulation of n terms stays within n ulps of the total magnitude; bf16/fp16
            // results are then rounded once more (half an ulp; one allowed).
            double tolerance = inputs.length * Math.ulp((float) magnitude) + 1e-30;
            double got;
            switch (dtype) {
                case BFLOAT16 -> {
                    got = HalfFloats.fromBf16(result.getShort(i * 2));
                    tolerance += HalfFloats.ulpBf16(reference);
                }
                case FLOAT16 -> {
                    got = HalfFloats.fromFp16(result.getShort(i * 2));
                    tolerance += HalfFloats.ulpFp16(reference);
                }
                default -> got = result.getFloat(i * 4);
            }
            if (!(Math.abs(got - reference) <= tolerance)) {
                return "element " + i + " of " + count + " is " + got + ", expected " + reference;
            }
        }
        return "ok";
    }

    private String sameOnEveryRank(ByteBuffer result) {
        CRC32 crc = new CRC32();
        crc.update(result.duplicate());
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

    private long roundToElements(long bytes) {
        return Math.max(dtype.bytes(), bytes / dtype.bytes() * dtype.bytes());
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
        out.printf("symmem all-reduce: %s, %s sum, %d ranks, backend %s (%s); time per op from Java (System.nanoTime"
                + " around back-to-back launches + synchronize)%n", algo.id(), dtype.shortName(), world,
                runtime.backend().name(), runtime.backend().deviceName());
        out.printf("%10s %9s %12s %12s %12s %14s  %s%n", "size", "runs", "latency us", "algbw GB/s", "busbw GB/s",
                "algorithm", "check");
        for (Row row : rows) {
            double algbw = row.bytes() / (row.micros() * 1e-6) / 1e9;
            double busbw = algbw * 2.0 * (world - 1) / world;
            out.printf("%10s %9d %12.1f %12.2f %12.2f %14s  %s%n", ByteSize.format(row.bytes()), row.iterations(),
                    row.micros(), algbw, busbw, row.algorithm(), row.check());
        }
    }
}
