package io.symmem.cli.bench;

import java.util.Arrays;

/** Latency summary of one measured phase: nanosecond samples in, microsecond figures out. */
record BenchStats(long count, double meanUs, double p50Us, double p99Us, double maxUs) {

    static final BenchStats EMPTY = new BenchStats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    /** Summarises {@code n} samples (nanoseconds) taken from the start of {@code samples}; sorts them. */
    static BenchStats of(long[] samples, int n) {
        if (n == 0) {
            return EMPTY;
        }
        Arrays.sort(samples, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += samples[i];
        }
        return new BenchStats(n, sum / n / 1e3, percentile(samples, n, 0.50), percentile(samples, n, 0.99),
                samples[n - 1] / 1e3);
    }

    /** Nearest-rank percentile of sorted samples, in microseconds. */
    static double percentile(long[] sorted, int n, double q) {
        int index = (int) Math.ceil(q * n) - 1;
        return sorted[Math.max(0, Math.min(n - 1, index))] / 1e3;
    }

    /** Concatenates per-thread sample arrays, each with its own fill count. */
    static long[] merge(long[][] perThread, int[] counts) {
        int total = 0;
        for (int c : counts) {
            total += c;
        }
        long[] all = new long[total];
        int at = 0;
        for (int t = 0; t < perThread.length; t++) {
            System.arraycopy(perThread[t], 0, all, at, counts[t]);
            at += counts[t];
        }
        return all;
    }
}
