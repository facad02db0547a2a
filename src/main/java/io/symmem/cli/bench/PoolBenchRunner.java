package io.symmem.cli.bench;

import io.symmem.collective.Algorithm;
import io.symmem.collective.AllReduce;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.memory.PoolFigures;
import io.symmem.memory.SymmetricMemPool;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.io.File;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** The three parts of {@code symmem bench pool} (see {@link PoolBenchCommand}). Rank 0 prints. */
final class PoolBenchRunner {
    record Settings(long pairSize, int pairs, int rendezvous, int cycles, int maxLive, long maxBlock, List<Long> sizes,
            DType dtype, int minTimeMs, int repeats) {
    }

    private final RankRuntime runtime;
    private final Settings s;
    private final PrintStream out;
    private final int rank;
    private final StoreExchange exchange;
    private final Duration timeout;
    private final LaunchTimer timer;
    /**
     * Ten warm-up launches, then one round of as many as fill --min-time-ms, at most 5000: one round, as --repeats
     * already repeats every measurement and the bench reports their median.
     */
    private final LaunchTimer.Plan plan;
    private final List<String> table = new ArrayList<>();

    PoolBenchRunner(RankRuntime runtime, Settings settings, PrintStream out) {
        this.runtime = runtime;
        this.s = settings;
        this.out = out;
        this.rank = runtime.config().rank();
        this.exchange = runtime.exchange("bench-pool", rank, runtime.config().worldSize());
        this.timeout = runtime.config().timeout().rendezvous();
        this.timer = new LaunchTimer(exchange, timeout);
        this.plan = new LaunchTimer.Plan(10, 0, 0, settings.minTimeMs(), 5000, 1);
    }

    void run() {
        say("symmem bench pool: %d ranks, backend %s (%s); times are the max over ranks", runtime.config().worldSize(),
                runtime.backend().name(), runtime.backend().deviceName());
        warmPairs();
        randomCycles();
        if (!s.sizes().isEmpty()) {
            allReduces();
        }
        say("---- summary ----");
        table.forEach(this::say);
        runtime.leave();
    }

    /** (1) Warm allocate+close pairs, each timed alone; beside them, plain allocations with rendezvous. */
    private void warmPairs() {
        long[] pair = new long[s.pairs()];
        try (SymmetricMemPool pool = runtime.createPool(exchange, false)) {
            pool.allocate(s.pairSize()).close();  // the segment's rendezvous happens here, before timing
            for (int i = 0; i < Math.min(s.pairs(), 20_000); i++) {
                pool.allocate(s.pairSize()).close();  // JIT warm-up
            }
            for (int i = 0; i < s.pairs(); i++) {
                long t0 = System.nanoTime();
                SymmetricMemory m = pool.allocate(s.pairSize());
                m.close();
                pair[i] = System.nanoTime() - t0;
            }
            if (pool.figures().segments() != 1) {
                throw new IllegalStateException("warm pairs added segments: " + pool.figures().summary());
            }
        }
        long[] plain = new long[s.rendezvous()];
        for (int i = 0; i < s.rendezvous(); i++) {
            long t0 = System.nanoTime();
            try (SymmetricMemory m = runtime.allocator().allocate(exchange, s.pairSize(), timeout)) {
                plain[i] = System.nanoTime() - t0;
            }
        }
        double pairMedian = timer.maxOverRanks(percentile(pair, 0.5) / 1e3);
        double pairP99 = timer.maxOverRanks(percentile(pair, 0.99) / 1e3);
        double plainMedian = timer.maxOverRanks(percentile(plain, 0.5) / 1e3);
        row("warm pool allocate+close pair (%d bytes, %d pairs): median %.3f us, p99 %.3f us", s.pairSize(), s.pairs(),
                pairMedian, pairP99);
        row("plain symmetric allocation with rendezvous (%d bytes, %d times): median %.1f us (allocate only; %.0fx the pool pair)",
                s.pairSize(), s.rendezvous(), plainMedian, plainMedian / pairMedian);
    }

    /** (2) Random cycles: same seed on every rank, since the sequence must be the same everywhere. */
    private void randomCycles() {
        long fdsBefore = openFds();
        SplittableRandom random = new SplittableRandom(1313);
        PoolFigures during;
        PoolFigures after;
        long t0 = System.nanoTime();
        try (SymmetricMemPool pool = runtime.createPool(exchange, false)) {
            List<SymmetricMemory> live = new ArrayList<>();
            for (int i = 0; i < s.cycles(); i++) {
                if (live.size() >= s.maxLive() || (!live.isEmpty() && random.nextBoolean())) {
                    live.remove(random.nextInt(live.size())).close();
                } else {
                    live.add(pool.allocate(1 + random.nextLong(s.maxBlock())));
                }
            }
            during = pool.figures();
            live.forEach(SymmetricMemory::close);
            after = pool.figures();
            pool.verify();  // the ranks' sequences still agree after all of it
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long fdsAfter = openFds();
        boolean leak = after.allocatedBytes() != 0 || after.liveBlocks() != 0 || after.heldBytes() != 0 || fdsAfter > fdsBefore;
        row("%d random cycles (max %d live, blocks 1..%d bytes) in %.2f s: %d segment(s), peak allocated %d of %d reserved,"
                + " fragmentation %.3f with %d blocks live, %.3f after freeing all", s.cycles(), s.maxLive(), s.maxBlock(),
                seconds, during.segments(), during.peakAllocatedBytes(), during.reservedBytes(), during.fragmentation(),
                during.liveBlocks(), after.fragmentation());
        row("leak check: allocated %d, live blocks %d, held %d after freeing all; open fds %d before, %d after the pool: %s",
                after.allocatedBytes(), after.liveBlocks(), after.heldBytes(), fdsBefore, fdsAfter, leak ? "LEAK" : "no leak");
        if (leak) {
            throw new IllegalStateException("pool leak: " + after.summary() + "; fds " + fdsBefore + " -> " + fdsAfter);
        }
    }

    /** (3) All-reduce on a pool block (at a non-zero offset) against a dedicated buffer of the same size. */
    private void allReduces() {
        long maxBytes = s.sizes().stream().mapToLong(Long::longValue).max().orElseThrow();
        DType t = s.dtype();
        Duration collective = runtime.config().timeout().collective();
        row("all-reduce %s sum out of place, AUTO, one stream; us per op = N back-to-back launches + synchronize / N,"
                + " max over ranks, median of %d alternating runs", t.shortName(), s.repeats());
        row("%12s %12s %12s %9s", "bytes", "dedicated", "pool", "pool/ded");
        // Closed in reverse: the block (its marker goes on a live stream) before the stream.
        try (SymmetricMemPool pool = runtime.createPool(exchange, false);
                NativeStream stream = runtime.backend().createStream();
                SymmetricMemory dedicated = runtime.allocator().allocate(exchange, maxBytes, timeout);
                LocalBuffer result = dedicated.allocateLocal(maxBytes);
                SymmetricMemory before = pool.allocate(12_345);  // so the measured block is not at offset 0
                SymmetricMemory block = pool.allocate(maxBytes)) {
            LaunchTimer.fillRandom(dedicated, maxBytes, t, rank);
            LaunchTimer.fillRandom(block, maxBytes, t, rank);
            pool.recordStream(block, stream);
            for (long size : s.sizes()) {
                long count = Math.max(1, size / t.bytes());
                double[] ded = new double[s.repeats()];
                double[] poo = new double[s.repeats()];
                for (int r = 0; r < s.repeats(); r++) {
                    ded[r] = timer.time(dedicated, stream, plan, () -> AllReduce.run(dedicated, Algorithm.AUTO, t, ReduceOp.SUM,
                            count, result, stream, collective)).micros();
                    poo[r] = timer.time(block, stream, plan, () -> AllReduce.run(block, Algorithm.AUTO, t, ReduceOp.SUM,
                            count, result, stream, collective)).micros();
                }
                double d = median(ded);
                double p = median(poo);
                row("%12d %12.2f %12.2f %9.3f", count * t.bytes(), d, p, p / d);
            }
        }
    }

    private static double percentile(long[] samples, double q) {
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static long openFds() {
        String[] entries = new File("/proc/self/fd").list();
        return entries == null ? -1 : entries.length;
    }

    private void row(String format, Object... args) {
        String line = String.format(format, args);
        table.add(line);
        say("%s", line);
    }

    private void say(String format, Object... args) {
        if (rank == 0) {
            out.printf(format + "%n", args);
        }
    }
}
