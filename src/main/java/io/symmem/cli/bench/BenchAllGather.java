package io.symmem.cli.bench;

import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An all_gather of small values among many simulated ranks: one {@link StoreExchange} per rank, each
 * with its own client (own connection), all calling allGather at once. Measures the time from the
 * first call to the last rank done, and checks every rank's result (rank r's value at index r).
 */
final class BenchAllGather {

    /** One round's figures. */
    record Result(int ranks, int round, double seconds, long errors, String firstError) {
    }

    private final BenchClients clients;
    private final int ranks;
    private final int valueBytes;
    private final Duration timeout;
    private final List<StoreExchange> exchanges = new ArrayList<>();
    private final java.util.concurrent.ExecutorService rankThreads;

    BenchAllGather(BenchClients clients, int ranks, String group, int valueBytes, Duration timeout, boolean threadPerRank) {
        this.clients = clients;
        this.ranks = ranks;
        this.valueBytes = valueBytes;
        this.timeout = timeout;
        for (int r = 0; r < ranks; r++) {
            exchanges.add(new StoreExchange(clients.get(r), group, r, ranks));
        }
        this.rankThreads = !threadPerRank ? null : java.util.concurrent.Executors.newFixedThreadPool(ranks, task -> {
            Thread t = new Thread(task, "bench-rank");
            t.setDaemon(true);
            return t;
        });
    }

    /** Ends the rank threads. */
    void shutdown() {
        if (rankThreads != null) {
            rankThreads.shutdownNow();
        }
    }

    /**
     * One all_gather on every rank; waits at most the timeout plus a little for all of them. Results
     * are checked after the last rank is done, so checking costs nothing in the figure.
     */
    Result run(int round) throws InterruptedException {
        AtomicLong lastDone = new AtomicLong();
        List<CompletableFuture<List<byte[]>>> all = new ArrayList<>(ranks);
        List<CompletableFuture<List<byte[]>>> timed = new ArrayList<>(ranks);
        byte[][] mine = new byte[ranks][];
        for (int r = 0; r < ranks; r++) {
            mine[r] = value(round, r);
        }
        long start = System.nanoTime();
        for (int r = 0; r < ranks; r++) {
            StoreExchange exchange = exchanges.get(r);
            byte[] value = mine[r];
            // Blocking clients wait on the caller's thread, so each rank gets a thread of its own;
            // event-loop clients are simply all started at once.
            CompletableFuture<List<byte[]>> f = rankThreads == null
                    ? exchange.allGather(value, timeout).subscribeAsCompletionStage()
                    : CompletableFuture.supplyAsync(() -> exchange.allGather(value, timeout).await().atMost(timeout.plusSeconds(5)),
                            rankThreads);
            all.add(f);
            timed.add(f.whenComplete((values, e) -> lastDone.accumulateAndGet(System.nanoTime(), Math::max)));
        }
        long errors = 0;
        String firstError = null;
        try {
            CompletableFuture.allOf(timed.toArray(CompletableFuture[]::new)).exceptionally(e -> null)
                    .get(timeout.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            firstError = "not every rank finished: " + e;
        }
        double seconds = (lastDone.get() - start) / 1e9;
        for (int r = 0; r < ranks; r++) {
            CompletableFuture<List<byte[]>> f = all.get(r);
            String problem;
            if (!f.isDone()) {
                problem = "never finished";
            } else if (f.isCompletedExceptionally()) {
                problem = f.handle((v, e) -> String.valueOf(e)).join();
            } else {
                problem = check(f.join(), mine);
            }
            if (problem != null) {
                errors++;
                if (firstError == null) {
                    firstError = "rank " + r + ": " + problem;
                }
            }
        }
        return new Result(ranks, round, seconds, errors, firstError);
    }

    private String check(List<byte[]> values, byte[][] expected) {
        if (values.size() != ranks) {
            return "got " + values.size() + " values, expected " + ranks;
        }
        for (int r = 0; r < ranks; r++) {
            if (!Arrays.equals(values.get(r), expected[r])) {
                return "value of rank " + r + " differs";
            }
        }
        return null;
    }

    private byte[] value(int round, int rank) {
        return BenchValues.of("all_gather/" + round + "/" + rank, valueBytes);
    }
}
