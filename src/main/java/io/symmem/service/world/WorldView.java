package io.symmem.service.world;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.BackPressureStrategy;
import io.smallrye.mutiny.subscription.MultiEmitter;
import io.symmem.liveness.WorldFailure;
import io.symmem.store.LiveKeys;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * This rank's view of its world: the state of every rank, and the events that changed it. Fed by the
 * world log that liveness watches (so a departure reaches the view as fast as it fails the world)
 * and by this rank's own abort. Thread-safe: events come from liveness threads, readers are HTTP
 * requests.
 *
 * <p>Subscribers first get the events they missed (every event after the number they name, from a
 * bounded history), then the live ones; both under one lock, so none is lost or doubled between the
 * two.
 */
public final class WorldView {
    /** The Vert.x event-bus address where each event is published as JSON, for components in the process. */
    public static final String EVENT_BUS_ADDRESS = "symmem.world.events";
    /** Events kept for late subscribers; a world sends a few per rank, so this holds every one of most worlds. */
    static final int HISTORY = 4096;

    /** One rank as the view holds it; {@code at} is when this rank learned of the last change. */
    public record RankEntry(int rank, RankState state, String detail, Instant at) {
    }

    private final int self;
    private final RankEntry[] ranks;
    private final Deque<WorldEvent> history = new ArrayDeque<>();
    private final List<MultiEmitter<? super WorldEvent>> subscribers = new CopyOnWriteArrayList<>();
    private final Consumer<WorldEvent> published;
    private long seq;
    /** The generation of the world the entries describe (see io.symmem.world.WorldGeneration). */
    private long generation;

    /** @param published told of every event, in order, under the view's lock (the event bus); must not block */
    public WorldView(int self, int worldSize, Consumer<WorldEvent> published) {
        this.self = self;
        this.ranks = new RankEntry[worldSize];
        for (int r = 0; r < worldSize; r++) {
            ranks[r] = new RankEntry(r, RankState.UNKNOWN, null, null);
        }
        this.published = published;
    }

    public int worldSize() {
        return ranks.length;
    }

    /** An entry of the world log. Entries that would move a rank back (a late "joined") change nothing. */
    public synchronized void record(LiveKeys.WorldRecord record) {
        if (record.rank() < 0 || record.rank() >= ranks.length) {
            return; // not of this world (the log's publisher validated its rank against its own world size)
        }
        RankState next = switch (record.kind()) {
            case JOINED -> RankState.JOINED;
            case READY -> RankState.READY;
            case LEFT -> RankState.LEFT;
            case GONE -> RankState.GONE;
        };
        if (!moves(record.rank(), next)) {
            return;
        }
        Instant now = Instant.now();
        ranks[record.rank()] = new RankEntry(record.rank(), next, record.detail(), now);
        String type = switch (record.kind()) {
            case JOINED -> "joined";
            case READY -> "ready";
            case LEFT, GONE -> "departed";
        };
        Boolean orderly = next.isFinal() ? next == RankState.LEFT : null;
        emit(new WorldEvent(++seq, type, record.rank(), null, orderly, record.detail(), now, generation));
    }

    /** This rank aborted its world: the ranks named are gone (unless they had left), and an {@code aborted} event follows. */
    public synchronized void aborted(WorldFailure failure) {
        Instant now = Instant.now();
        for (int r : failure.ranks()) {
            if (r >= 0 && r < ranks.length && moves(r, RankState.GONE)) {
                ranks[r] = new RankEntry(r, RankState.GONE, failure.reason(), now);
            }
        }
        emit(new WorldEvent(++seq, "aborted", self, sorted(failure.ranks()), null, failure.reason(), now, generation));
    }

    /**
     * This rank formed the world again, as {@code generation}, after it was lost: every rank is in it and
     * ready (the rendezvous of the generation passed), so every entry starts over as ready; a
     * {@code reformed} event says so. Entries of the old generation that come late change nothing.
     */
    public synchronized void reformed(long newGeneration, String reason) {
        Instant now = Instant.now();
        generation = newGeneration;
        for (int r = 0; r < ranks.length; r++) {
            ranks[r] = new RankEntry(r, RankState.READY, "generation " + newGeneration, now);
        }
        emit(new WorldEvent(++seq, "reformed", self, allRanks(), null, reason, now, newGeneration));
    }

    /** A rank that joined a later generation at its start (it restarted): its events carry that number. */
    public synchronized void joinedGeneration(long joined) {
        generation = joined;
    }

    /** The generation the entries describe: 0 until the world re-forms. */
    public synchronized long generation() {
        return generation;
    }

    public synchronized List<RankEntry> ranks() {
        return List.of(ranks);
    }

    /** The number of the last event; 0 before the first. */
    public synchronized long lastSeq() {
        return seq;
    }

    /**
     * Every event after number {@code after} still in the history, then every new one, until the
     * subscriber cancels.
     */
    public Multi<WorldEvent> events(long after) {
        return Multi.createFrom().<WorldEvent>emitter(emitter -> {
            synchronized (this) {
                for (WorldEvent e : history) {
                    if (e.seq() > after) {
                        emitter.emit(e);
                    }
                }
                subscribers.add(emitter);
            }
            emitter.onTermination(() -> subscribers.remove(emitter));
        }, BackPressureStrategy.BUFFER);
    }

    private boolean moves(int rank, RankState next) {
        RankState now = ranks[rank].state();
        return !now.isFinal() && next.ordinal() > now.ordinal();
    }

    private void emit(WorldEvent event) {
        history.addLast(event);
        if (history.size() > HISTORY) {
            history.removeFirst();
        }
        for (MultiEmitter<? super WorldEvent> s : subscribers) {
            s.emit(event);
        }
        published.accept(event);
    }

    private List<Integer> allRanks() {
        List<Integer> all = new ArrayList<>();
        for (int r = 0; r < ranks.length; r++) {
            all.add(r);
        }
        return all;
    }

    private static List<Integer> sorted(Collection<Integer> ranks) {
        Integer[] all = ranks.toArray(new Integer[0]);
        Arrays.sort(all);
        return new ArrayList<>(Arrays.asList(all));
    }
}
