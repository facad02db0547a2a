package io.symmem.liveness;

import io.symmem.store.LiveKeys;
import io.symmem.store.Store;
import io.symmem.store.StoreTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Finds out, for one rank, when a peer or the store is gone, and reports it to {@link Liveness}:
 * <ol>
 * <li><b>Departures</b> (the fast path): the rank sets its ephemeral member key on its own {@code events}
 * connection and always has a WAIT pending for the next entry of the world log ({@link LiveKeys}). A
 * symmem store deletes the member key of a connection that closes without leaving and logs a
 * departure, which wakes every rank's WAIT: a killed rank is known everywhere within milliseconds.
 * The log also says when a rank joined, became ready and left in order: every entry goes to the
 * agent's listener (the service's world events), and only departures fail the world.</li>
 * <li><b>The store</b>: the {@code events} connection dropping means the store (and, when rank 0 hosts
 * it, rank 0) is gone; see {@link #connectionLost}.</li>
 * <li><b>Heartbeats</b> (the rest: a rank that hangs, a store that cannot watch connections, such as
 * PyTorch's TCPStore): every rank SETs its beat key a few times per liveness bound (a SET is never
 * held back by a pending WAIT); rank 0 reads every rank's beat, the others read rank 0's, on a
 * {@code probe} connection that never waits on keys. A beat that has not moved for the liveness
 * bound makes the reader publish that rank's departure; a probe read that gets no answer within the
 * bound means the store is not answering.</li>
 * </ol>
 * The reader judges silence by its own observations: if its own loop was held up (a stalled JVM), it
 * restarts the clocks rather than blame its peers.
 *
 * <p>On an etcd store ({@link #useLeases}) the member key lives on the rank's etcd lease instead of a
 * connection: etcd removes it when the lease expires (the rank died or lost the cluster for the TTL),
 * and every rank watches the member keys, so a departure is known within the TTL, collective or not.
 */
public final class LivenessAgent implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(LivenessAgent.class);
    /**
     * Shortest wait for the next log entry before the watch looks for a hole (a number claimed by a
     * publisher that died before it set the entry); the wait is at least twice the liveness bound.
     */
    private static final Duration MIN_WATCH_CHUNK = Duration.ofSeconds(2);
    /** Fewest milliseconds between beats, however short the liveness bound. */
    private static final long MIN_INTERVAL_MS = 50;

    private final Liveness liveness;
    private final Store events;
    private final Store probe;
    private final int rank;
    private final int worldSize;
    private final Duration bound;
    private final long intervalMs;
    private final String storeName;
    private final boolean storeHostedByRank0;
    private final ScheduledExecutorService timer;
    private volatile boolean stopped;
    private long beats;
    /** Beats seen by the monitor: last value and when it last changed (System.nanoTime). */
    private final Map<Integer, String> lastBeat = new HashMap<>();
    private final Map<Integer, Long> lastChange = new HashMap<>();
    private final Set<Integer> declared = new java.util.HashSet<>();
    private long lastCheckNanos;
    private volatile boolean monitoring;
    private final Duration watchChunk;
    private final Consumer<LiveKeys.WorldRecord> records;
    /** The log number the watch found claimed but empty at its last timeout; 0 if none. */
    private volatile long suspectedHole;
    /** Member keys on etcd leases, or null (a TCP store: the server removes the keys of closed connections). */
    private LeasedMembers leases;
    private AutoCloseable memberWatch;

    /**
     * @param events the rank's own liveness connection (member key, departure waits, beats); on the
     *     rank that hosts the store, the in-process store
     * @param probe a connection for the monitor's reads, on which nothing ever waits for a key
     * @param bound how long a rank may be silent (SYMMEM_TIMEOUT_LIVENESS)
     * @param storeName how to name the store in messages ("127.0.0.1:29500")
     * @param storeHostedByRank0 the store lives in rank 0's process: losing it means rank 0 is gone
     */
    public LivenessAgent(Liveness liveness, Store events, Store probe, int worldSize, Duration bound, String storeName,
            boolean storeHostedByRank0) {
        this(liveness, events, probe, worldSize, bound, storeName, storeHostedByRank0, record -> { });
    }

    /** As above; {@code records} hears every entry of the world log, in order, on the agent's threads. */
    public LivenessAgent(Liveness liveness, Store events, Store probe, int worldSize, Duration bound, String storeName,
            boolean storeHostedByRank0, Consumer<LiveKeys.WorldRecord> records) {
        this.records = records;
        this.watchChunk = bound.multipliedBy(2).compareTo(MIN_WATCH_CHUNK) > 0 ? bound.multipliedBy(2) : MIN_WATCH_CHUNK;
        this.liveness = liveness;
        this.events = events;
        this.probe = probe;
        this.rank = liveness.rank();
        this.worldSize = worldSize;
        this.bound = bound;
        this.intervalMs = Math.max(MIN_INTERVAL_MS, bound.toMillis() / 6);
        this.storeName = storeName;
        this.storeHostedByRank0 = storeHostedByRank0;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "symmem-liveness");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Joins liveness: member key, first beat, the "joined" log entry, and the watch of the world log
     * (departures logged before this rank joined are reported at once). Call before the world
     * rendezvous, so that a rank dying during it is noticed too.
     */
    public void start(Duration storeTimeout) {
        beat();
        if (leases != null) {
            leases.whenOwnLeaseLost(this::ownLeaseLost);
            memberWatch = leases.watch(r -> onTimer(() -> memberRemoved(r)), error -> {
                if (!stopped) {
                    LOG.warnf("rank %d: the watch of member keys at %s ended: %s", rank, storeName, error.getMessage());
                }
            });
            leases.hold(rank, storeTimeout);
        } else if (!(storeHostedByRank0 && rank == 0)) {
            // The hosting rank needs no member key: its death takes the store with it.
            events.set(LiveKeys.member(rank), Integer.toString(rank).getBytes(StandardCharsets.US_ASCII))
                    .await().atMost(storeTimeout);
        }
        publish(new LiveKeys.WorldRecord(rank, LiveKeys.Kind.JOINED, "joined the world"), storeTimeout);
        watchFrom(readLog(probe.add(LiveKeys.EVENTS, 0).await().atMost(storeTimeout), storeTimeout));
        timer.scheduleWithFixedDelay(this::tick, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** Member keys live on etcd leases: call before {@link #start}. */
    public void useLeases(LeasedMembers members) {
        this.leases = members;
    }

    /**
     * A member key is gone. A rank that left in order set its beat to "left" before deleting its key;
     * any other removal is its lease expiring: the rank is gone. Runs on the agent's thread.
     */
    private void memberRemoved(int r) {
        if (stopped || r == rank || declared.contains(r)) {
            return;
        }
        String beat;
        try {
            beat = new String(probe.multiGet(List.of(LiveKeys.beat(r)), bound).await().atMost(bound.plusSeconds(1)).get(0),
                    StandardCharsets.US_ASCII);
        } catch (RuntimeException e) {
            beat = "(unread: " + e.getMessage() + ")";
        }
        if (LiveKeys.LEFT.equals(beat)) {
            return;
        }
        declared.add(r);
        received(LiveKeys.WorldRecord.gone(r, "its etcd lease expired: no renewal for " + leases.ttlSeconds()
                + " s, seen by rank " + rank), "");
    }

    /** This rank's own lease was lost while it runs: its member key is gone, its peers take it for gone. */
    private void ownLeaseLost(String why) {
        if (!stopped) {
            liveness.fail(Set.of(rank), "rank " + rank + " lost its lease on the etcd store at " + storeName + " (" + why
                    + "): its peers take it for gone", false);
        }
    }

    /** Logs that this rank finished the world rendezvous; does not wait (a failure only loses the entry). */
    public void publishReady() {
        onTimer(() -> {
            try {
                publish(new LiveKeys.WorldRecord(rank, LiveKeys.Kind.READY, "finished the world rendezvous"), bound);
            } catch (RuntimeException e) {
                LOG.debugf("rank %d: 'ready' not logged: %s", rank, e.getMessage());
            }
        });
    }

    /** Runs {@code task} on the agent's thread (it may block), unless the agent has stopped. */
    private void onTimer(Runnable task) {
        try {
            if (!stopped) {
                timer.execute(task);
            }
        } catch (java.util.concurrent.RejectedExecutionException stopping) {
            // stopped meanwhile: nothing more to watch or log
        }
    }

    /** Appends {@code record} to the world log, on the probe connection (the events one holds a WAIT). */
    private long publish(LiveKeys.WorldRecord record, Duration timeout) {
        long n = probe.add(LiveKeys.EVENTS, 1).await().atMost(timeout);
        probe.set(LiveKeys.event(n), record.encode()).await().atMost(timeout);
        return n;
    }

    /**
     * Reports the entries logged before the watch starts, in batches of one request each, and returns
     * the number the watch starts at: the first one not set yet (its publisher may be setting it now,
     * or have died: the watch tells the two apart).
     */
    private long readLog(long published, Duration storeTimeout) {
        final int batch = 128;
        String when = ", before rank " + rank + " joined";
        for (long from = 1; from <= published; from += batch) {
            List<String> keys = new ArrayList<>();
            for (long n = from; n <= Math.min(published, from + batch - 1); n++) {
                keys.add(LiveKeys.event(n));
            }
            if (!probe.check(keys).await().atMost(storeTimeout)) {
                for (int i = 0; i < keys.size(); i++) {
                    if (!probe.check(List.of(keys.get(i))).await().atMost(storeTimeout)) {
                        return from + i;
                    }
                    received(LiveKeys.WorldRecord.decode(probe.get(keys.get(i), storeTimeout).await().atMost(storeTimeout)), when);
                }
                continue;
            }
            for (byte[] value : probe.multiGet(keys, storeTimeout).await().atMost(storeTimeout.plusSeconds(1))) {
                received(LiveKeys.WorldRecord.decode(value), when);
            }
        }
        return published + 1;
    }

    /**
     * From the world rendezvous on every rank has beaten at least once: the heartbeat monitor may
     * start (before it, a rank that never came is the rendezvous' to name, not liveness').
     */
    public void startMonitoring() {
        monitoring = true;
    }

    /** The connection to the store dropped: the store is gone, and with it rank 0 when rank 0 hosts it. */
    public void connectionLost() {
        if (stopped) {
            return;
        }
        if (storeHostedByRank0) {
            liveness.fail(Set.of(0), "rank 0 is gone: the store it hosts at " + storeName + " closed the connection", true);
        } else {
            liveness.fail(Set.of(), "the store at " + storeName + " is gone: it closed the connection", true);
        }
    }

    /**
     * Leaves in order: the beat says "left" and the member key is deleted (on the probe connection,
     * since the events connection holds a WAIT), so closing the connections afterwards publishes no
     * departure.
     */
    public void leave(Duration timeout) {
        if (stopped) {
            return;
        }
        stopped = true;
        timer.shutdownNow();
        try {
            timer.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS); // no beat can follow the last one
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // On the beats' own connection, so that no beat still in flight lands after it.
        events.set(LiveKeys.beat(rank), LiveKeys.LEFT.getBytes(StandardCharsets.US_ASCII)).await().atMost(timeout);
        awaitLeftBeatApplied(timeout);
        publish(new LiveKeys.WorldRecord(rank, LiveKeys.Kind.LEFT, "left in order"), timeout);
        if (!(storeHostedByRank0 && rank == 0)) {
            probe.delete(LiveKeys.member(rank)).await().atMost(timeout);
        }
        stopMemberWatch();
    }

    /**
     * A SET has no answer, and the events connection holds a WAIT, so no answer on it can show that the
     * server has read the "left" beat; and the kernel may deliver later requests on other connections
     * first. Rank 0 may take this run's keys away as soon as every rank has reported that it left, and
     * a beat read after that would leave a stray key in a long-lived store. So the beat is read back on
     * the probe connection (check first: nothing waits there) until it shows; past {@code timeout} the
     * rank leaves anyway, with a warning.
     */
    private void awaitLeftBeatApplied(Duration timeout) {
        String key = LiveKeys.beat(rank);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!(probe.check(List.of(key)).await().atMost(timeout)
                && LiveKeys.LEFT.equals(new String(probe.get(key, timeout).await().atMost(timeout), StandardCharsets.US_ASCII)))) {
            if (System.nanoTime() - deadline > 0) {
                LOG.warnf("rank %d: the store at %s did not show this rank's 'left' beat within %s; leaving anyway",
                        rank, storeName, timeout);
                return;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        stopped = true;
        timer.shutdownNow();
        stopMemberWatch();
    }

    private void stopMemberWatch() {
        AutoCloseable watch = memberWatch;
        if (watch != null) {
            try {
                watch.close();
            } catch (Exception e) {
                LOG.debugf("rank %d: member watch not closed: %s", rank, e.getMessage());
            }
        }
    }

    private void watchFrom(long next) {
        if (stopped) {
            return;
        }
        events.get(LiveKeys.event(next), watchChunk).subscribe().with(value -> {
            suspectedHole = 0;
            received(LiveKeys.WorldRecord.decode(value), "");
            watchFrom(next + 1);
        }, error -> {
            if (error instanceof StoreTimeoutException) {
                onTimer(() -> watchFrom(skipHole(next)));
            } else if (!stopped) {
                // The events connection failed; connectionLost() names it when the drop is what happened.
                LOG.debugf("rank %d: world log watch ended: %s", rank, error.getMessage());
                connectionLost();
            }
        });
    }

    /**
     * The watch of entry {@code next} timed out. A number claimed (the log is longer) but still empty
     * after two whole waits belongs to a publisher that died between its ADD and its SET: it stays a
     * hole, and the watch moves past it. A live publisher sets its entry within a round trip, and one
     * stalled for two liveness bounds is declared gone by its heartbeat anyway.
     */
    private long skipHole(long next) {
        try {
            long published = probe.add(LiveKeys.EVENTS, 0).await().atMost(bound);
            if (published < next) {
                suspectedHole = 0;
                return next;
            }
            if (suspectedHole == next) {
                LOG.debugf("rank %d: world log entry %d was claimed but never set; skipping it", rank, next);
                suspectedHole = 0;
                return next + 1;
            }
            suspectedHole = next;
        } catch (RuntimeException e) {
            LOG.debugf("rank %d: could not read the world log's length: %s", rank, e.getMessage());
        }
        return next;
    }

    /** An entry of the world log: told to the listener; a departure fails the world. */
    private void received(LiveKeys.WorldRecord record, String when) {
        if (stopped) {
            return;
        }
        try {
            records.accept(record);
        } catch (RuntimeException e) {
            LOG.debugf("rank %d: world log listener failed: %s", rank, e.getMessage());
        }
        if (record.kind() == LiveKeys.Kind.GONE) {
            departed(record, when);
        }
    }

    private void departed(LiveKeys.WorldRecord departure, String when) {
        if (departure.rank() == rank) {
            liveness.fail(Set.of(rank), "rank " + rank + " itself was declared gone by its peers (" + departure.detail() + when + ")");
            return;
        }
        liveness.fail(Set.of(departure.rank()), "rank " + departure.rank() + " is gone (" + departure.detail() + when + ")");
    }

    // ---- heartbeats ---------------------------------------------------------------------------

    private void tick() {
        try {
            if (stopped) {
                return;
            }
            beat();
            if (monitoring && !liveness.failed()) {
                monitor();
            }
        } catch (RuntimeException e) {
            LOG.debugf("rank %d: liveness tick failed: %s", rank, e.getMessage());
        }
    }

    private void beat() {
        events.set(LiveKeys.beat(rank), Long.toString(++beats).getBytes(StandardCharsets.US_ASCII))
                .subscribe().with(ok -> { }, e -> LOG.debugf("rank %d: heartbeat not sent: %s", rank, e.getMessage()));
    }

    /**
     * Whether silent rank {@code r} still holds its member key. On a symmem store a key that is gone
     * means the rank left in order or the server published its departure: not one to declare. On
     * etcd an expired lease removes the key and publishes nothing, and this read can see the key gone
     * before the watch's removal event arrives: the removal is handled here as the watch would.
     */
    private boolean isMember(int r) {
        if (storeHostedByRank0 && r == 0) {
            return true; // the hosting rank has no member key
        }
        boolean member = probe.check(List.of(LiveKeys.member(r))).await().atMost(bound);
        if (!member) {
            if (leases != null) {
                memberRemoved(r);
            } else {
                declared.add(r);
            }
        }
        return member;
    }

    private void monitor() {
        List<Integer> watched = new ArrayList<>();
        if (rank == 0) {
            for (int r = 1; r < worldSize; r++) {
                if (!declared.contains(r)) {
                    watched.add(r);
                }
            }
        } else if (!declared.contains(0)) {
            watched.add(0);
        }
        watched.removeIf(r -> LiveKeys.LEFT.equals(lastBeat.get(r)));
        if (watched.isEmpty()) {
            return;
        }
        long started = System.nanoTime();
        if (lastCheckNanos != 0 && started - lastCheckNanos > 3 * intervalMs * 1_000_000L) {
            // This rank was held up itself (GC, starved CPU): its view of silence is not to be trusted.
            LOG.debugf("rank %d: liveness monitor was late by %d ms; restarting its clocks", rank,
                    (started - lastCheckNanos) / 1_000_000);
            lastChange.replaceAll((r, t) -> started);
        }
        List<byte[]> values;
        try {
            values = probe.multiGet(watched.stream().map(LiveKeys::beat).toList(), bound).await().atMost(bound.plusSeconds(1));
        } catch (StoreTimeoutException | io.smallrye.mutiny.TimeoutException e) {
            if (!stopped) {
                liveness.fail(storeHostedByRank0 ? Set.of(0) : Set.of(), "the store at " + storeName + " did not answer for "
                        + bound.toMillis() + " ms" + (storeHostedByRank0 ? " (rank 0 hosts it)" : ""), true);
            }
            return;
        }
        long now = System.nanoTime();
        lastCheckNanos = now;
        List<Integer> silent = new ArrayList<>();
        for (int i = 0; i < watched.size(); i++) {
            int r = watched.get(i);
            String value = new String(values.get(i), StandardCharsets.US_ASCII);
            if (!value.equals(lastBeat.get(r))) {
                lastBeat.put(r, value);
                lastChange.put(r, now);
            } else if (now - lastChange.getOrDefault(r, now) > bound.toNanos() && isMember(r)) {
                silent.add(r);
            }
        }
        for (int r : silent) {
            declared.add(r);
            LiveKeys.WorldRecord departure = LiveKeys.WorldRecord.gone(r, "no heartbeat for more than " + bound.toMillis()
                    + " ms, seen by rank " + rank);
            long n = publish(departure, bound);
            LOG.warnf("rank %d: rank %d sent no heartbeat for %d ms: departure logged as world event %d", rank, r, bound.toMillis(), n);
            departed(departure, ""); // at once; the listener hears of it from the log, like every rank

        }
    }
}
