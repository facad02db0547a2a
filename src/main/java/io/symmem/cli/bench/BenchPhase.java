package io.symmem.cli.bench;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs one timed operation on N clients at once, one platform thread per client, and measures the
 * latency of every call around the blocking call. All threads start together; the phase ends when
 * every thread has done its operations or the phase's time limit has passed (no new operation
 * starts after it). Throughput is successful operations over the time from the start to the last
 * thread's end.
 */
final class BenchPhase implements AutoCloseable {

    /** What one operation came to (SKIPPED: nothing to do, not counted). */
    enum Outcome { OK, ERROR, LOST, SKIPPED }

    /** One operation of one client: {@code client} is the client's index, {@code op} the operation's. */
    @FunctionalInterface
    interface Op {
        Outcome run(int client, int op) throws Exception;
    }

    /** The figures of one phase. */
    record Result(BenchStats latency, long ok, long errors, long lost, double seconds, int[] done,
                  String firstError, boolean finished) {
        double opsPerSecond() {
            return seconds > 0 ? ok / seconds : 0;
        }
    }

    private final int clients;
    private final ExecutorService pool;

    BenchPhase(int clients) {
        this.clients = clients;
        AtomicInteger n = new AtomicInteger();
        // Small stacks: 1024 blocked threads must fit comfortably on a small machine.
        this.pool = Executors.newFixedThreadPool(clients, r -> {
            Thread t = new Thread(null, r, "bench-client-" + n.getAndIncrement(), 256 * 1024);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Runs {@code ops[c]} operations on each client c (fewer if {@code limit} passes first) and waits
     * at most {@code limit + grace} for the threads to finish.
     */
    Result run(int[] ops, Duration limit, Duration grace, Op op) throws InterruptedException {
        long[][] samples = new long[clients][];
        int[] done = new int[clients];
        AtomicLong errors = new AtomicLong();
        AtomicLong lost = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicLong lastEnd = new AtomicLong();
        CountDownLatch ready = new CountDownLatch(clients);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(clients);
        long[] startAt = new long[1];
        for (int c = 0; c < clients; c++) {
            final int client = c;
            samples[c] = new long[ops[c]];
            pool.execute(() -> {
                try {
                    ready.countDown();
                    go.await();
                    long stopAt = startAt[0] + limit.toNanos();
                    long[] mine = samples[client];
                    int i = 0;
                    for (; i < ops[client]; i++) {
                        long t0 = System.nanoTime();
                        if (t0 - stopAt > 0) {
                            break;
                        }
                        Outcome outcome;
                        try {
                            outcome = op.run(client, i);
                        } catch (Exception e) {
                            outcome = Outcome.ERROR;
                            firstError.compareAndSet(null, "client " + client + " op " + i + ": " + e);
                        }
                        long t1 = System.nanoTime();
                        if (outcome == Outcome.OK) {
                            mine[i] = t1 - t0;
                        } else {
                            mine[i] = -1;
                            if (outcome != Outcome.SKIPPED) {
                                (outcome == Outcome.LOST ? lost : errors).incrementAndGet();
                            }
                        }
                    }
                    done[client] = i;
                    lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    finished.countDown();
                }
            });
        }
        ready.await(grace.toNanos() + limit.toNanos(), TimeUnit.NANOSECONDS);
        startAt[0] = System.nanoTime();
        go.countDown();
        boolean allDone = finished.await(limit.plus(grace).toNanos(), TimeUnit.NANOSECONDS);
        long end = allDone ? lastEnd.get() : System.nanoTime();
        return new Result(collect(samples, done, allDone), countOk(samples, done, allDone), errors.get(), lost.get(),
                (end - startAt[0]) / 1e9, done, firstError.get(), allDone);
    }

    private static BenchStats collect(long[][] samples, int[] done, boolean allDone) {
        int total = 0;
        for (int c = 0; c < samples.length; c++) {
            total += allDone ? done[c] : 0;
        }
        long[] all = new long[total];
        int n = 0;
        for (int c = 0; c < samples.length && allDone; c++) {
            for (int i = 0; i < done[c]; i++) {
                if (samples[c][i] >= 0) {
                    all[n++] = samples[c][i];
                }
            }
        }
        return BenchStats.of(all, n);
    }

    private static long countOk(long[][] samples, int[] done, boolean allDone) {
        long ok = 0;
        for (int c = 0; c < samples.length && allDone; c++) {
            for (int i = 0; i < done[c]; i++) {
                if (samples[c][i] >= 0) {
                    ok++;
                }
            }
        }
        return ok;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
