package io.symmem.cli.bench;

import io.symmem.cli.common.HalfFloats;
import io.symmem.collective.DType;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeStream;
import io.symmem.store.StoreExchange;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * How the collective benchmarks time a launch: warm-up, a probe of {@value #PROBE} launches that sizes N
 * (the maximum over ranks, so that every rank launches as often), a host barrier that lines the ranks
 * up, then N back-to-back launches on one stream and one synchronize; µs per op is elapsed / N, the
 * maximum over ranks.
 */
final class LaunchTimer {
    private static final int PROBE = 5;
    private static final long MIN_LAUNCHES = 10;

    /**
     * @param warmup untimed launches first
     * @param launches launches timed; 0 or less: as many as fill {@code minTimeMs}, from 10 to {@code maxLaunches}
     */
    record Plan(int warmup, long launches, int minTimeMs, long maxLaunches) {
    }

    /** µs per op (the maximum over ranks) and the launches it was measured over. */
    record Timing(double micros, long launches) {
    }

    private final StoreExchange exchange;
    private final Duration timeout;

    /** @param exchange the benchmark's group, every rank of which times the same launches */
    LaunchTimer(StoreExchange exchange, Duration timeout) {
        this.exchange = exchange;
        this.timeout = timeout;
    }

    Timing time(SymmetricMemory memory, NativeStream stream, Plan plan, Runnable launch) {
        for (int i = 0; i < plan.warmup(); i++) {
            launch.run();
        }
        memory.synchronize(stream);
        long n = plan.launches();
        if (n <= 0) {
            long t0 = System.nanoTime();
            for (int i = 0; i < PROBE; i++) {
                launch.run();
            }
            memory.synchronize(stream);
            double probeMicros = (System.nanoTime() - t0) / 1e3 / PROBE;
            n = Math.max(MIN_LAUNCHES, Math.min(plan.maxLaunches(), (long) (plan.minTimeMs() * 1e3 / Math.max(probeMicros, 0.5))));
            n = (long) maxOverRanks(n);
        }
        memory.barrier(1);
        long t0 = System.nanoTime();
        for (long i = 0; i < n; i++) {
            launch.run();
        }
        memory.synchronize(stream);
        return new Timing(maxOverRanks((System.nanoTime() - t0) / 1e3 / n), n);
    }

    /** The largest of every rank's value (a collective call: every rank of the exchange makes it). */
    double maxOverRanks(double value) {
        return exchange.allGather(Double.toString(value).getBytes(StandardCharsets.UTF_8), timeout).await()
                .atMost(timeout.plusSeconds(5)).stream().mapToDouble(b -> Double.parseDouble(new String(b, StandardCharsets.UTF_8)))
                .max().orElseThrow();
    }

    /** Random inputs in [-1, 1) in {@code dtype}, a different sequence per rank (the values do not change the timing). */
    static void fillRandom(SymmetricMemory memory, long bytes, DType dtype, int rank) {
        SplittableRandom random = new SplittableRandom(17 + rank);
        if (dtype == DType.FLOAT32) {
            float[] values = new float[(int) (bytes / 4)];
            for (int i = 0; i < values.length; i++) {
                values[i] = (float) (random.nextDouble() * 2 - 1);
            }
            memory.copyFrom(values, 0);
        } else {
            short[] values = new short[(int) (bytes / 2)];
            for (int i = 0; i < values.length; i++) {
                float f = (float) (random.nextDouble() * 2 - 1);
                values[i] = dtype == DType.BFLOAT16 ? HalfFloats.toBf16(f) : HalfFloats.toFp16(f);
            }
            memory.copyFrom(values, 0);
        }
    }
}
