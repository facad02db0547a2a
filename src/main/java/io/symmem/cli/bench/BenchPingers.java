package io.symmem.cli.bench;

import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Well-behaved clients that PING the store on a fixed schedule (each on its own thread and
 * connection) while something else happens, so that what the others do to their latency can be read
 * off afterwards for any time window.
 *
 * <p>Each ping is due at {@code start + k * interval}. Two latencies are kept: the round trip of the
 * call, and the time from when the ping was due to its answer. The second is what a client on that
 * schedule lives through: a store that stalls for 5 s gives one 5 s round trip, but 5,000 late pings
 * (the correction for "coordinated omission"); with only round trips a single long stall hides in the
 * percentiles.
 */
final class BenchPingers implements AutoCloseable {

    /** Samples of one pinger; written by its thread, read after {@link #close()} joined it. */
    private static final class Samples {
        long[] due = new long[4096];
        long[] roundTrip = new long[4096];
        long[] fromDue = new long[4096];
        int n;
        long errors;
        String firstError;

        /** {@code rtt} is -1 for a ping that was due but not sent (see pingOnSchedule). */
        void add(long dueAt, long rtt, long late) {
            if (n == due.length) {
                due = Arrays.copyOf(due, n * 2);
                roundTrip = Arrays.copyOf(roundTrip, n * 2);
                fromDue = Arrays.copyOf(fromDue, n * 2);
            }
            due[n] = dueAt;
            roundTrip[n] = rtt;
            fromDue[n] = late;
            n++;
        }
    }

    /** Latency figures of the pings due in one window: round trips of those sent, and from due time of all. */
    record Window(BenchStats roundTrip, BenchStats fromDue, long errors, String firstError) {}

    private final List<BlockingStoreClient> clients = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<Samples> samples = new ArrayList<>();
    private volatile boolean stop;

    BenchPingers(String host, int port, int count, Duration interval) {
        long intervalNanos = interval.toNanos();
        for (int i = 0; i < count; i++) {
            BlockingStoreClient client = BlockingStoreClient.connect(host, port, Duration.ofSeconds(30), TcpStoreClient.Options.defaults());
            Samples mine = new Samples();
            clients.add(client);
            samples.add(mine);
            Thread thread = new Thread(() -> pingOnSchedule(client, mine, intervalNanos), "bench-pinger-" + i);
            thread.setDaemon(true);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
    }

    private void pingOnSchedule(BlockingStoreClient client, Samples mine, long intervalNanos) {
        long next = System.nanoTime();
        while (!stop) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                continue;
            }
            long sent = System.nanoTime();
            try {
                client.ping().await().atMost(Duration.ofSeconds(120));
                long done = System.nanoTime();
                mine.add(next, done - sent, done - next);
                // The pings due while this one was stalled: none of them could have been answered before
                // it was (one server loop), so each counts from its due time to this answer. They are not
                // sent afterwards: catching up would push the schedule past the phase they belong to.
                long due = next + intervalNanos;
                for (; due - done < 0; due += intervalNanos) {
                    mine.add(due, -1, done - due);
                }
                next = due;
            } catch (RuntimeException e) {
                mine.errors++;
                if (mine.firstError == null) {
                    mine.firstError = e.toString();
                }
                next += intervalNanos;
            }
        }
    }

    /** Figures of the pings due in [{@code from}, {@code to}) (System.nanoTime() values); call after {@link #close()}. */
    Window between(long from, long to) {
        return within(List.of(new long[] {from, to}));
    }

    /** Figures of the pings due in any of the windows ({from, to} pairs); call after {@link #close()}. */
    Window within(List<long[]> windows) {
        long[] rtt = new long[total()];
        long[] late = new long[rtt.length];
        int n = 0;
        long errors = 0;
        String firstError = null;
        int sent = 0;
        for (Samples s : samples) {
            for (int i = 0; i < s.n; i++) {
                if (inAny(s.due[i], windows)) {
                    if (s.roundTrip[i] >= 0) {
                        rtt[sent++] = s.roundTrip[i];
                    }
                    late[n++] = s.fromDue[i];
                }
            }
            errors += s.errors;
            firstError = firstError != null ? firstError : s.firstError;
        }
        return new Window(BenchStats.of(rtt, sent), BenchStats.of(late, n), errors, firstError);
    }

    private static boolean inAny(long due, List<long[]> windows) {
        for (long[] w : windows) {
            if (due - w[0] >= 0 && due - w[1] < 0) {
                return true;
            }
        }
        return false;
    }

    private int total() {
        return samples.stream().mapToInt(s -> s.n).sum();
    }

    /** Stops the pingers after their current ping and closes their connections. */
    @Override
    public void close() {
        stop = true;
        for (Thread thread : threads) {
            try {
                thread.join(Duration.ofSeconds(130).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        clients.forEach(BlockingStoreClient::close);
    }
}
