package io.symmem.cli.bench;

import io.symmem.cli.common.HalfFloats;
import io.symmem.collective.DType;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import io.symmem.store.StoreExchange;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.ObjLongConsumer;

/**
 * How the collective benchmarks time a launch, the way the native NCCL bench (nccl_bench.cpp) does: untimed
 * warm-up, a probe of {@value #PROBE} launches that sizes the rest from the slowest rank (so every rank launches as
 * often: a collective pairs the ranks' calls), untimed launches that give the JIT time to compile the call path,
 * then {@code rounds} rounds, each a host barrier that lines the ranks up and N back-to-back launches on one stream
 * and one synchronize. A round's µs per op is elapsed / N on the slowest rank (the collective is as fast as its
 * slowest rank); the fastest round is kept, as the native bench keeps the lower of its two rounds.
 */
final class LaunchTimer {
    private static final int PROBE = 10;
    private static final long MIN_LAUNCHES = 10;

    /**
     * @param warmup untimed launches first
     * @param warmupMs then more untimed launches, as many as fill this time by the probe (0: none), so that the
     *     rounds time compiled code, not the interpreter or C1's first tier
     * @param launches launches per round; 0 or less: as many as fill {@code minTimeMs}, from 10 to {@code maxLaunches}
     * @param rounds timed rounds; the fastest is kept
     */
    record Plan(int warmup, int warmupMs, long launches, int minTimeMs, long maxLaunches, int rounds) {
        Plan {
            if (warmup < 0 || warmupMs < 0 || minTimeMs < 1 || maxLaunches < MIN_LAUNCHES || rounds < 1) {
                throw new IllegalArgumentException("timing plan: warm-up " + warmup + " launches and " + warmupMs
                        + " ms must be >= 0, min time " + minTimeMs + " ms >= 1, at most " + maxLaunches + " launches >= "
                        + MIN_LAUNCHES + ", rounds " + rounds + " >= 1");
            }
        }

        /** The method in words, for a bench's header and its JSON "timing" field. */
        String describe() {
            String perRound = launches > 0 ? launches + " launches" : "N launches (N fills " + minTimeMs
                    + " ms by a " + PROBE + "-launch probe on the slowest rank, " + MIN_LAUNCHES + ".." + maxLaunches + ")";
            String jit = warmupMs > 0 ? " + as many as fill " + warmupMs + " ms (JIT)" : "";
            String best = rounds == 1 ? "1 round" : "best of " + rounds + " rounds";
            return "warm-up " + warmup + " launches" + jit + "; per round: host barrier, System.nanoTime around " + perRound
                    + " back-to-back on one stream + synchronize, / N, slowest rank; " + best
                    + "; host = the same clock before the synchronize, / N (what a call costs the caller)";
        }
    }

    /**
     * µs per op and µs per call on the host (before the synchronize) of the kept round, slowest rank; which rank that
     * was (the largest µs per op; -1 where the ranks do not say).
     */
    record Timing(double micros, double hostMicros, long launches, int slowestRank) {
    }

    /** Element-wise the largest of every rank's values, and the rank whose first value was the largest (-1: unknown). */
    record Agreement(double[] max, int slowestRank) {
    }

    /** What timing needs from the ranks of a bench. */
    interface Ranks {
        /** Returns once every rank called it. */
        void lineUp();

        /** Element-wise the largest of every rank's values (collective: every rank calls it). */
        double[] maxOverRanks(double... values);

        /** The same, saying which rank had the largest first value where it can tell. */
        default Agreement agree(double... values) {
            return new Agreement(maxOverRanks(values), -1);
        }
    }

    private final StoreExchange exchange;
    private final Duration timeout;

    /** @param exchange the benchmark's group, every rank of which times the same launches */
    LaunchTimer(StoreExchange exchange, Duration timeout) {
        this.exchange = exchange;
        this.timeout = timeout;
    }

    Timing time(SymmetricMemory memory, NativeStream stream, Plan plan, Runnable launch) {
        return timeAlternately(memory, stream, plan, List.of(one(launch))).get(0);
    }

    /**
     * Several ways of making the same launches, their rounds alternated ({@link #measureAlternately}). A way's
     * {@code accept(n)} makes n back-to-back launches itself (a native loop may), so that the clock sees what that
     * way costs, not a Java call per launch.
     */
    List<Timing> timeAlternately(SymmetricMemory memory, NativeStream stream, Plan plan, List<LongConsumer> ways) {
        Ranks ranks = new Ranks() {
            @Override
            public void lineUp() {
                memory.barrier(1);
            }

            @Override
            public double[] maxOverRanks(double... values) {
                return LaunchTimer.this.maxOverRanks(values);
            }

            @Override
            public Agreement agree(double... values) {
                return LaunchTimer.this.agree(values);
            }
        };
        return measureAlternately(plan, ways, () -> memory.synchronize(stream), ranks, System::nanoTime);
    }

    /** n launches, one Java call each. */
    private static LongConsumer one(Runnable launch) {
        return n -> {
            for (long i = 0; i < n; i++) {
                launch.run();
            }
        };
    }

    /** The method of the class comment, on any clock (tests: a fake one). */
    static Timing measure(Plan plan, Runnable launch, Runnable synchronize, Ranks ranks, LongSupplier nanoClock) {
        return measureAlternately(plan, List.of(one(launch)), synchronize, ranks, nanoClock).get(0);
    }

    /**
     * Several ways of making the same launches, measured together: each warmed up, the round size from the first
     * way's probe (every way launches as often), and the rounds taken way after way (round 1 of each, then round 2
     * of each...), so that a drift of the machine over the measurement falls on every way alike. One timing per way.
     */
    static List<Timing> measureAlternately(Plan plan, List<LongConsumer> ways, Runnable synchronize, Ranks ranks,
            LongSupplier nanoClock) {
        if (plan.warmup() > 0) {
            for (LongConsumer way : ways) {
                way.accept(plan.warmup());
            }
        }
        synchronize.run();
        long n = plan.launches();
        if (n <= 0 || plan.warmupMs() > 0) {
            long t0 = nanoClock.getAsLong();
            ways.get(0).accept(PROBE);
            synchronize.run();
            // Every rank derives its counts from the same (slowest) probe, so all launch equally often.
            double probeMicros = Math.max(ranks.maxOverRanks((nanoClock.getAsLong() - t0) / 1e3 / PROBE)[0], 0.5);
            if (n <= 0) {
                n = fill(plan.minTimeMs(), probeMicros, MIN_LAUNCHES, plan.maxLaunches());
            }
            long jit = plan.warmupMs() > 0 ? fill(plan.warmupMs(), probeMicros, 0, plan.maxLaunches()) : 0;
            if (jit > 0) {
                for (LongConsumer way : ways) {
                    way.accept(jit);
                }
            }
            synchronize.run();
        }
        Timing[] best = new Timing[ways.size()];
        for (int round = 0; round < plan.rounds(); round++) {
            for (int w = 0; w < ways.size(); w++) {
                ranks.lineUp();
                long t0 = nanoClock.getAsLong();
                ways.get(w).accept(n);
                long t1 = nanoClock.getAsLong();
                synchronize.run();
                long t2 = nanoClock.getAsLong();
                Agreement slowest = ranks.agree((t2 - t0) / 1e3 / n, (t1 - t0) / 1e3 / n);
                if (best[w] == null || slowest.max()[0] < best[w].micros()) {
                    best[w] = new Timing(slowest.max()[0], slowest.max()[1], n, slowest.slowestRank());
                }
            }
        }
        return List.of(best);
    }

    private static long fill(int millis, double probeMicros, long min, long max) {
        return Math.max(min, Math.min(max, (long) (millis * 1e3 / probeMicros)));
    }

    /** Element-wise the largest of every rank's values (a collective call: every rank of the exchange makes it). */
    double[] maxOverRanks(double... values) {
        return agree(values).max();
    }

    /** {@link #maxOverRanks}, and the rank whose first value was the largest (the all-gather is in rank order). */
    Agreement agree(double... values) {
        String mine = String.join(",", Arrays.stream(values).mapToObj(Double::toString).toList());
        List<byte[]> all = exchange.allGather(mine.getBytes(StandardCharsets.UTF_8), timeout).await()
                .atMost(timeout.plusSeconds(5));
        double[] max = values.clone();
        int slowest = -1;
        double largestFirst = Double.NEGATIVE_INFINITY;
        for (int r = 0; r < all.size(); r++) {
            String[] theirs = new String(all.get(r), StandardCharsets.UTF_8).split(",");
            for (int i = 0; i < max.length; i++) {
                max[i] = Math.max(max[i], Double.parseDouble(theirs[i]));
            }
            double first = Double.parseDouble(theirs[0]);
            if (first > largestFirst) {
                largestFirst = first;
                slowest = r;
            }
        }
        return new Agreement(max, slowest);
    }

    /** The largest of every rank's value (collective). */
    double maxOverRanks(double value) {
        return maxOverRanks(new double[] {value})[0];
    }

    /** Random inputs in [-1, 1) in {@code dtype}, a different sequence per rank (see {@link #fillRandom(long, DType, int, ObjLongConsumer)}). */
    static void fillRandom(SymmetricMemory memory, long bytes, DType dtype, int rank) {
        fillRandom(bytes, dtype, rank, memory::copyFrom);
    }

    /** The same values into local device memory: NCCL's plain columns time on the data its windows do. */
    static void fillRandom(LocalBuffer buffer, long bytes, DType dtype, int rank) {
        fillRandom(bytes, dtype, rank, buffer::copyFrom);
    }

    /** Host bytes per copy: the values travel in pieces, so any size fills without a host array of its size. */
    private static final int FILL_CHUNK_BYTES = 16 << 20;

    /**
     * Uniform in [-1, 1), seeded by the rank, in the device's byte order (little-endian): never zeros (a bench
     * never times on zeros). Whole elements only, the first {@code bytes / dtype.bytes()} of them, each piece handed
     * to {@code into} with its byte offset (a device memory's copyFrom).
     */
    static void fillRandom(long bytes, DType dtype, int rank, ObjLongConsumer<ByteBuffer> into) {
        SplittableRandom random = new SplittableRandom(17 + rank);
        long elements = bytes / dtype.bytes();
        ByteBuffer chunk = ByteBuffer.allocate((int) Math.min(FILL_CHUNK_BYTES, elements * dtype.bytes()))
                .order(ByteOrder.LITTLE_ENDIAN);
        for (long done = 0; done < elements; ) {
            chunk.clear();
            long n = Math.min(chunk.capacity() / dtype.bytes(), elements - done);
            for (long i = 0; i < n; i++) {
                float f = (float) (random.nextDouble() * 2 - 1);
                switch (dtype) {
                    case FLOAT32 -> chunk.putFloat(f);
                    case BFLOAT16 -> chunk.putShort(HalfFloats.toBf16(f));
                    default -> chunk.putShort(HalfFloats.toFp16(f));
                }
            }
            into.accept(chunk.flip(), done * dtype.bytes());
            done += n;
        }
    }
}
