package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * All-gather, broadcast and barrier of small byte values among the ranks of one group, through a
 * {@link Store}.
 *
 * <p>Every call takes the next round number of THIS instance, and its keys are
 * {@code symmem/ex/<group>/<instance>/<round>/<rank>}. Because the round counter belongs to the
 * group (not to the process, as PyTorch's global sequence counter does), a subgroup and the world can
 * be used in any interleaving without their rendezvous keys colliding. The instance number tells apart
 * successive instances for the same group name on one store (a component that makes a new exchange
 * per use): on its first call an instance counts itself in at {@code symmem/ex/<group>/instances/<rank>}
 * (one ADD, one round trip), so the k-th instance a rank uses for a group pairs with the k-th instance
 * of every other rank. All ranks of a group must make the same sequence of calls, and use their
 * instances for it in the same order, as with any collective.
 *
 * <p>Rounds pair by order, so a round that one member abandoned would pair its peers' next calls with
 * the wrong ones. It cannot: each key holds an {@link ExchangeFrame} (the call's label and the value),
 * and a member whose round fails (deadline, abort, a store error, a peer of another label) puts the
 * instance out of step for good and leaves a mark in its keys of that round and the next; every later
 * call on it is refused at once and leaves the same mark in its round, so every peer whose call meets
 * the member fails too ({@link ExchangeOutOfStepException}, naming the first round and its cause)
 * instead of answering with a value of another call.
 *
 * <p>Calls start when made (the returned Uni reports the outcome). On timeout the Uni fails with a
 * {@link RendezvousTimeoutException} naming the group, the round and the ranks whose key is missing.
 *
 * <p>Keys are never deleted (a rank cannot know when every peer has read them without another
 * round, and rounds of one instance may overlap); they are small, and a group is expected to make few
 * calls. See docs/store.md (Not done yet).
 *
 * <p>Round trips per rank: all_gather and barrier = set (no answer) + one multiGet (WAIT on all keys +
 * MULTI_GET, one write with a pipelining client); broadcast = one compare-set on the root (it learns of a
 * member that gave the round up), one get elsewhere.
 */
public final class StoreExchange {

    static final String KEY_ROOT = "symmem/ex/";

    /**
     * Fires the deadline of counting an instance in. A daemon thread of symmem's own: Mutiny's default
     * timer thread is not a daemon, and would keep a plain Java program (no Quarkus to shut it down)
     * from exiting after its last call.
     */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "symmem-exchange-deadlines");
        t.setDaemon(true);
        return t;
    });

    private final Store store;
    private final String groupName;
    private final int rank;
    private final int worldSize;
    private final AtomicLong nextRound = new AtomicLong();
    /** This instance's number for its group, counted in on the first call. */
    private final AtomicReference<CompletableFuture<Long>> instance = new AtomicReference<>();
    /** Set once, by the first round that fails here or meets a peer's mark; never cleared. */
    private final AtomicReference<OutOfStep> outOfStep = new AtomicReference<>();

    public StoreExchange(Store store, String groupName, int rank, int worldSize) {
        this.store = Objects.requireNonNull(store, "store must not be null");
        if (groupName == null || groupName.isBlank()) {
            throw new IllegalArgumentException("groupName must not be blank");
        }
        if (groupName.contains("/")) {
            // '/' separates key segments; allowing it would let "a/1" and "a" collide.
            throw new IllegalArgumentException("groupName must not contain '/', got '" + groupName + "'");
        }
        if (worldSize < 1) {
            throw new IllegalArgumentException("worldSize must be at least 1, got " + worldSize);
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank must be in 0.." + (worldSize - 1) + ", got " + rank);
        }
        this.groupName = groupName;
        this.rank = rank;
        this.worldSize = worldSize;
    }

    public String groupName() {
        return groupName;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    /** From this many ranks on, all_gather goes through one combined value (see gatherThroughCombinedValue). */
    static final int COMBINE_FROM_WORLD_SIZE = 64;

    /** Keys one all_gather round leaves in the store: one per rank, plus the counter and the combined value of large groups. */
    public static int keysPerAllGather(int worldSize) {
        return worldSize + (worldSize < COMBINE_FROM_WORLD_SIZE ? 0 : 2);
    }

    /** Keys a group leaves in the store besides its rounds': one instance counter per rank. */
    public static int keysPerGroup(int worldSize) {
        return worldSize;
    }

    /** Rounds started so far; the next call uses this number. */
    public long rounds() {
        return nextRound.get();
    }

    /** Every rank contributes {@code mine}; yields all contributions, index = rank. */
    public Uni<List<byte[]>> allGather(byte[] mine, Duration timeout) {
        return allGather("all_gather", mine, timeout);
    }

    /**
     * As {@link #allGather(byte[], Duration)}, for a call that should pair only with calls of the same
     * {@code label} (an all-reduce built on the gather, say): members whose labels differ in one round
     * fail, naming both labels, instead of mixing their values.
     */
    public Uni<List<byte[]>> allGather(String label, byte[] mine, Duration timeout) {
        Objects.requireNonNull(label, "label must not be null");
        Objects.requireNonNull(mine, "mine must not be null");
        requirePositive(timeout);
        return call("all_gather", label, -1, timeout, round -> gather(round, mine));
    }

    /**
     * The root's value on every rank. {@code value} is required on the root and ignored elsewhere
     * (pass null).
     */
    public Uni<byte[]> broadcast(int root, byte[] value, Duration timeout) {
        if (root < 0 || root >= worldSize) {
            throw new IllegalArgumentException("root must be in 0.." + (worldSize - 1) + ", got " + root);
        }
        if (root == rank) {
            Objects.requireNonNull(value, "value must not be null on the root rank");
        }
        requirePositive(timeout);
        return call("broadcast", "broadcast from rank " + root, root, timeout, round -> {
            String rootKey = round.key(root);
            if (root == rank) {
                // Compare-set, not set: a member that gave this round up has left its mark in the root's key,
                // and the root must learn it rather than answer as if the round had paired.
                byte[] frame = ExchangeFrame.contribution(round.label, value);
                return store.compareSet(rootKey, new byte[0], frame).map(current -> {
                    if (!Arrays.equals(current, frame)) {
                        ExchangeFrame.payloads(roundOf(round), List.of(rootKey), List.of(current), false);
                    }
                    return value;
                });
            }
            return explained(store.get(rootKey, remainingOrFloor(round)), round, List.of(rootKey))
                    .map(raw -> ExchangeFrame.payloads(roundOf(round), List.of(rootKey), List.of(raw), false).get(0));
        });
    }

    /** Completes on every rank once all ranks of the group have called it. */
    public Uni<Void> barrier(Duration timeout) {
        requirePositive(timeout);
        return call("barrier", "barrier", -1, timeout, round -> gather(round, new byte[0]).replaceWithVoid());
    }

    /** The first round that failed on this member or on a peer it met since, if any: every call fails from then on. */
    public OptionalLong outOfStepSince() {
        OutOfStep since = outOfStep.get();
        return since == null ? OptionalLong.empty() : OptionalLong.of(since.round);
    }

    // ---- internals --------------------------------------------------------------------------

    /** Why a member left the group's sequence of rounds, and from which round on. */
    private record OutOfStep(long round, String why) {
    }

    /**
     * One call: takes its round, refuses at once when the group is out of step (leaving its mark in the
     * round for the peers that meet it), and on any failure of the round puts the group out of step, so
     * that no later round can pair with a value this round left behind.
     */
    private <T> Uni<T> call(String op, String label, int broadcastRoot, Duration timeout, Function<Round, Uni<T>> work) {
        return started(round(op, label, broadcastRoot, timeout).chain(round -> {
            OutOfStep since = outOfStep.get();
            if (since != null) {
                return mark(round, since, false).chain(() -> Uni.createFrom().failure(refusal(round, since)));
            }
            // A mismatch that every member saw failed the round alike everywhere: the group is still in step.
            return work.apply(round).onFailure(failure -> !(failure instanceof ExchangeMismatchException))
                    .call(failure -> fallOutOfStep(round, failure))
                    // A caller that stops waiting (an HTTP client that leaves) abandons the round as a deadline does.
                    .onCancellation().call(() -> fallOutOfStep(round, new CancellationException("its caller stopped waiting")));
        }));
    }

    /** Set (the first one wins) and marked in this round and in this member's key of the next one. */
    private Uni<Void> fallOutOfStep(Round round, Throwable failure) {
        OutOfStep first = failure instanceof ExchangeOutOfStepException passedOn
                ? new OutOfStep(passedOn.sinceRound(), passedOn.reason())
                : new OutOfStep(round.number, "group rank " + rank + " gave up round " + round.number + " (" + round.op + "): "
                        + failure.getMessage());
        OutOfStep since = outOfStep.compareAndExchange(null, first);
        if (failure instanceof StoreWaitAbortedException || failure instanceof StoreConnectionLostException) {
            // The world failed or the store is gone: every member's waits end anyway, and writing the
            // mark would only hold this failure while the client tries to reach the store again.
            return Uni.createFrom().voidItem();
        }
        return mark(round, since == null ? first : since, since == null);
    }

    /**
     * Leaves the out-of-step mark where the round's peers read this member: its own key, and for a
     * broadcast the root's key if the root has not written it yet. The wait for the store's answer makes
     * the mark visible before the caller hears of the failure. Best effort: a store that fails here
     * has already failed the round.
     */
    private Uni<Void> mark(Round round, OutOfStep since, boolean alsoNextRound) {
        byte[] frame = ExchangeFrame.outOfStep(since.round, since.why);
        String own = round.key(rank);
        Uni<Void> marked = store.set(own, frame);
        if (round.broadcastRoot >= 0 && round.broadcastRoot != rank) {
            marked = marked.chain(() -> store.compareSet(round.key(round.broadcastRoot), new byte[0], frame).replaceWithVoid());
        }
        if (alsoNextRound) {
            marked = marked.chain(() -> store.set(round.keyOfRound(round.number + 1, rank), frame));
        }
        // One deadline for all of it: a store that is reconnecting (its host gone) would hold each write
        // for as long as it tries, and the failure must reach the caller now.
        return marked.chain(() -> store.check(List.of(own)).replaceWithVoid())
                .ifNoItem().after(MARK_DEADLINE).on(DEADLINES).recoverWithItem((Void) null)
                .onFailure().recoverWithNull();
    }

    /** How long a failed or refused call waits for its mark to reach the store before it reports. */
    private static final Duration MARK_DEADLINE = Duration.ofSeconds(2);

    private ExchangeOutOfStepException refusal(Round round, OutOfStep since) {
        return new ExchangeOutOfStepException(round.op + " of group '" + groupName + "' (instance " + round.instanceNumber
                + ", round " + round.number + ") refused: the group is out of step since round " + since.round + " ("
                + since.why + "); every later call of this group fails the same way on every member: make a new group"
                + " and go on there", groupName, since.round, since.why);
    }

    /**
     * Gathers every member's frame of the round and checks them: a member out of step, or a member whose
     * call carries another label, fails the round with an {@link ExchangeOutOfStepException}.
     */
    private Uni<List<byte[]>> gather(Round round, byte[] mine) {
        List<String> keys = round.keysOfAllRanks();
        byte[] frame = ExchangeFrame.contribution(round.label, mine);
        Uni<List<byte[]>> gathered = worldSize < COMBINE_FROM_WORLD_SIZE
                ? gatherEveryKey(round, keys, frame)
                : gatherThroughCombinedValue(round, keys, frame);
        return explained(gathered, round, keys).map(frames -> ExchangeFrame.payloads(roundOf(round), keys, frames, true));
    }

    /**
     * Small groups: set (no answer) + one WAIT on all keys + one MULTI_GET, a round trip or two per rank
     * (a pipelining client sends WAIT and MULTI_GET in one write).
     */
    private Uni<List<byte[]>> gatherEveryKey(Round round, List<String> keys, byte[] mine) {
        return store.set(keys.get(rank), mine).chain(() -> store.multiGet(keys, remainingOrFloor(round)));
    }

    /**
     * Large groups: every rank asking for every key makes the store parse and track world² keys
     * (a million at 1024 ranks). Instead each rank sets its key and counts itself in; the last to
     * arrive reads all keys once and publishes them as one value, which everyone else waits for and
     * reads: O(world) work for the store. Only standard operations, so PyTorch's server serves it too.
     */
    private Uni<List<byte[]>> gatherThroughCombinedValue(Round round, List<String> keys, byte[] mine) {
        String combinedKey = round.sharedKey("all");
        return store.set(keys.get(rank), mine)
                .chain(() -> store.add(round.sharedKey("arrived"), 1))
                .chain(arrived -> arrived == worldSize
                        ? store.multiGet(keys, remainingOrFloor(round))
                                .call(values -> store.set(combinedKey, CombinedValues.encode(values)))
                        : store.get(combinedKey, remainingOrFloor(round)).map(CombinedValues::decode));
    }

    /**
     * The next round of this instance: its number is taken now (call order decides it), its keys once
     * the instance number is known; the deadline runs from now.
     */
    private Uni<Round> round(String op, String label, int broadcastRoot, Duration timeout) {
        long number = nextRound.getAndIncrement();
        long deadlineNanos = System.nanoTime() + timeout.toNanos();
        return instanceNumber(timeout).map(instanceNumber -> new Round(op, label, broadcastRoot, instanceNumber, number,
                timeout, deadlineNanos));
    }

    /**
     * Counts this instance in on first use; later calls reuse the number. A failed count is not
     * retried: the ADD may have reached the store before the failure, and counting twice would pair
     * this rank's instances with the wrong ones of its peers from then on. Every call of the instance
     * then fails with the count's error.
     */
    private Uni<Long> instanceNumber(Duration timeout) {
        CompletableFuture<Long> fresh = new CompletableFuture<>();
        if (instance.compareAndSet(null, fresh)) {
            String counter = KEY_ROOT + groupName + "/instances/" + rank;
            store.add(counter, 1)
                    .ifNoItem().after(timeout).on(DEADLINES).failWith(() -> new StoreTimeoutException("counting exchange '" + groupName
                            + "' in at " + counter + " via store " + store.describe() + " took longer than "
                            + DurationText.of(timeout), List.of(counter)))
                    .subscribe().with(fresh::complete, fresh::completeExceptionally);
        }
        return Uni.createFrom().completionStage(instance.get());
    }

    /** What the frames of {@code round} are checked against. */
    private ExchangeFrame.Expected roundOf(Round round) {
        return new ExchangeFrame.Expected(groupName, rank, round.op, round.label, round.instanceNumber, round.number);
    }

    /** One collective call: its op name and label, instance and round number, and deadline. */
    private final class Round {
        final String op;
        final String label;
        /** The root of a broadcast, -1 for the other calls. */
        final int broadcastRoot;
        final long instanceNumber;
        final long number;
        final Duration timeout;
        final long deadlineNanos;

        Round(String op, String label, int broadcastRoot, long instanceNumber, long number, Duration timeout, long deadlineNanos) {
            this.op = op;
            this.label = label;
            this.broadcastRoot = broadcastRoot;
            this.instanceNumber = instanceNumber;
            this.number = number;
            this.timeout = timeout;
            this.deadlineNanos = deadlineNanos;
        }

        /** The op is in the frame, not the key, so that a mark left for a round meets whatever call comes there. */
        private String prefix(long ofRound) {
            return KEY_ROOT + groupName + "/" + instanceNumber + "/" + ofRound + "/";
        }

        String key(int ofRank) {
            return keyOfRound(number, ofRank);
        }

        String keyOfRound(long ofRound, int ofRank) {
            return prefix(ofRound) + ofRank;
        }

        /** A key of the round that belongs to no rank (never parsed as a rank). */
        String sharedKey(String name) {
            return prefix(number) + "shared/" + name;
        }

        List<String> keysOfAllRanks() {
            List<String> keys = new ArrayList<>(worldSize);
            for (int r = 0; r < worldSize; r++) {
                keys.add(key(r));
            }
            return keys;
        }

        Duration remaining() {
            return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
        }
    }

    private static Duration remainingOrFloor(Round round) {
        return round.remaining().isZero() ? Duration.ofMillis(1) : round.remaining();
    }

    /** {@code wait}, with a timeout or an abort turned into an error naming the ranks still missing. */
    private <T> Uni<T> explained(Uni<T> wait, Round round, List<String> keys) {
        return wait.onFailure(StoreTimeoutException.class).recoverWithUni(timedOut -> explainTimeout(round, keys, timedOut))
                .onFailure(StoreWaitAbortedException.class)
                .recoverWithUni(aborted -> explainAbort(round, keys, (StoreWaitAbortedException) aborted));
    }

    /**
     * A wait cut short (a peer is gone): the error names the operation, why, and who had not arrived,
     * so a rank that was waiting for another missing rank still names it.
     */
    private <T> Uni<T> explainAbort(Round round, List<String> keys, StoreWaitAbortedException aborted) {
        return missingRanks(keys).onFailure().transform(checkFailed -> aborted).chain(missing -> {
            String message = round.op + " of group '" + groupName + "' (instance " + round.instanceNumber + ", round "
                    + round.number + "): aborted: " + aborted.reason()
                    + (missing.isEmpty() ? "" : "; no value from rank(s) " + missing + " yet");
            return Uni.createFrom().failure(new RendezvousAbortedException(message, aborted, missing));
        });
    }

    /** The ranks whose key is absent now, found with check() on each key. */
    private Uni<List<Integer>> missingRanks(List<String> keys) {
        List<Uni<Boolean>> checks = new ArrayList<>(keys.size());
        for (String key : keys) {
            checks.add(store.check(List.of(key)));
        }
        return Uni.join().all(checks).andFailFast().map(present -> {
            List<Integer> missing = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                if (!present.get(i)) {
                    missing.add(rankOfKey(keys.get(i)));
                }
            }
            return missing;
        });
    }

    /**
     * Turns a store timeout into one naming the missing ranks, found with check() on each rank's key
     * after the deadline. If those checks fail too, the original timeout is reported.
     */
    private <T> Uni<T> explainTimeout(Round round, List<String> keys, Throwable timedOut) {
        List<Uni<Boolean>> checks = new ArrayList<>(keys.size());
        for (String key : keys) {
            checks.add(store.check(List.of(key)));
        }
        return Uni.join().all(checks).andFailFast()
                .onFailure().transform(checkFailed -> timedOut)
                .chain(present -> {
                    List<Integer> missingRanks = new ArrayList<>();
                    List<String> missingKeys = new ArrayList<>();
                    for (int i = 0; i < keys.size(); i++) {
                        if (!present.get(i)) {
                            missingKeys.add(keys.get(i));
                            missingRanks.add(rankOfKey(keys.get(i)));
                        }
                    }
                    if (missingRanks.isEmpty()) {
                        // Everyone arrived just after the deadline; still a timeout, name all awaited ranks.
                        for (String key : keys) {
                            missingKeys.add(key);
                            missingRanks.add(rankOfKey(key));
                        }
                    }
                    String message = round.op + " of group '" + groupName + "' (instance " + round.instanceNumber
                            + ", round " + round.number
                            + ") timed out after " + DurationText.of(round.timeout) + ": no value from rank(s) "
                            + missingRanks + " via store " + store.describe();
                    return Uni.createFrom().failure(
                            new RendezvousTimeoutException(message, missingKeys, groupName, round.number, missingRanks));
                });
    }

    /** The group rank whose key {@code key} is (its last segment). */
    static int rankOfKey(String key) {
        return Integer.parseInt(key.substring(key.lastIndexOf('/') + 1));
    }

    private static void requirePositive(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /** Starts the work now, so the round's set happens at call time whatever the caller does with the Uni. */
    private static <T> Uni<T> started(Uni<T> work) {
        return Uni.createFrom().completionStage(work.subscribeAsCompletionStage());
    }
}
