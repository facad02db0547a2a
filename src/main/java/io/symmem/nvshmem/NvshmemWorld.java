package io.symmem.nvshmem;

import io.symmem.store.StoreExchange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.jboss.logging.Logger;

/**
 * This process's NVSHMEM world: one PE per rank of the symmem world, bootstrapped by unique id through
 * the store (no MPI, no PMI), and every call that NVSHMEM makes collective over all PEs agreed on first
 * through the store, with a deadline, so that a rank that is missing or out of step is named instead
 * of leaving the others blocked inside NVSHMEM, which has no deadlines:
 * <ul>
 * <li>join: rank 0's unique id is broadcast; every rank then meets at a barrier before any of them
 * enters NVSHMEM's bootstrap, and the bootstrap itself is watched for the rendezvous deadline;</li>
 * <li>allocate and free (nvshmem_malloc/free): every rank states which call it makes (its sequence
 * number, size and group); they must agree, whatever group each buffer is for; an allocation also
 * states SYMMEM_CUDA_PUSH_SCRATCH_BYTES and SYMMEM_CUDA_LL128_MAX_BYTES, which size the buffer's pad
 * region and so the nvshmem_malloc;</li>
 * <li>teams (nvshmem_team_split_strided) and finalize, likewise.</li>
 * </ul>
 * The agreements run on exchanges of their own, so that the rounds of other groups never shift them.
 */
public final class NvshmemWorld {
    private static final Logger LOG = Logger.getLogger(NvshmemWorld.class);
    /** How often a wait on NVSHMEM looks whether the process was aborted meanwhile. */
    private static final long ABORT_POLL_MS = 50;

    private final int rank;
    private final int worldSize;
    private final int device;
    private final NvshmemCalls calls;
    private final StoreExchange bootstrap;
    private final StoreExchange heap;
    private final StoreExchange teams;
    private final Map<List<Integer>, NvshmemTeam> teamsByRanks = new LinkedHashMap<>();
    /** Which ranks share a GPU (null: one GPU per rank). NVSHMEM then runs "limited MPG". */
    private final String sharedGpus;
    private long heapCalls;
    private boolean finalized;
    /**
     * A collective NVSHMEM call (heap or team) that passed its deadline inside NVSHMEM: no later one
     * can pair up with the peers'.
     */
    private String stuckCollectiveCall;

    private NvshmemWorld(Function<String, StoreExchange> exchanges, int rank, int worldSize, int device,
            NvshmemCalls calls, String sharedGpus) {
        this.sharedGpus = sharedGpus;
        this.rank = rank;
        this.worldSize = worldSize;
        this.device = device;
        this.calls = calls;
        this.bootstrap = exchanges.apply("nvshmem");
        this.heap = exchanges.apply("nvshmem-heap");
        this.teams = exchanges.apply("nvshmem-teams");
    }

    /**
     * Joins: collective over the world. {@code exchanges} makes the world-wide exchange of a name
     * (every rank of the world in it). Fails within about {@code timeout} naming the ranks that did not
     * come, or saying that NVSHMEM's own bootstrap did not finish after all of them had.
     */
    public static NvshmemWorld join(Function<String, StoreExchange> exchanges, int rank, int worldSize, int device,
            NvshmemCalls calls, Duration timeout) {
        return join(exchanges, rank, worldSize, device, calls, null, timeout);
    }

    /**
     * As {@link #join(Function, int, int, int, NvshmemCalls, Duration)}, where {@code sharedGpus} says which ranks
     * share a GPU (null when none do; every rank must pass the same). Several PEs on one GPU without
     * MPS is NVSHMEM's "limited MPG" mode, in which it ends the process (exit -1) on teams and on
     * finalize; symmem refuses teams there with an error and leaves NVSHMEM unfinalized.
     */
    public static NvshmemWorld join(Function<String, StoreExchange> exchanges, int rank, int worldSize, int device,
            NvshmemCalls calls, String sharedGpus, Duration timeout) {
        NvshmemWorld world = new NvshmemWorld(exchanges, rank, worldSize, device, calls, sharedGpus);
        world.bootstrap(timeout);
        return world;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    public int device() {
        return device;
    }

    private void bootstrap(Duration timeout) {
        byte[] uid = rank == 0 ? calls.uniqueId() : null;
        byte[] shared;
        try {
            shared = bootstrap.broadcast(0, uid, timeout).await().atMost(timeout.plusSeconds(5));
            // Nobody enters NVSHMEM's bootstrap (which waits for every PE, for ever) before all are here.
            bootstrap.barrier(timeout).await().atMost(timeout.plusSeconds(5));
        } catch (RuntimeException e) {
            throw new IllegalStateException("joining the NVSHMEM world (no rank has entered NVSHMEM yet): "
                    + e.getMessage(), e);
        }
        long started = System.nanoTime();
        awaitNvshmem("NVSHMEM's bootstrap (nvshmemx_hostlib_init_attr, PE " + rank + " of " + worldSize + ", device "
                + device + ")", () -> calls.init(device, rank, worldSize, shared), timeout,
                "every rank had reached it, so NVSHMEM's own connection among the PEs is stuck: check "
                        + "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME (the interface rank 0's unique id points the others at); "
                        + "NVSHMEM_DEBUG=INFO shows where it waits");
        LOG.infof("NVSHMEM world joined: PE %d of %d on device %d in %d ms", rank, worldSize, device,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    /**
     * Agrees on an nvshmem_malloc before it is made: every rank of the world calls this (with the
     * group its buffer is for) and then allocates, in the same order, with the same size.
     */
    public synchronized void agreeAllocation(String group, long sizeBytes, Duration timeout) {
        agreeHeapCall("allocate", group, sizeBytes, timeout);
    }

    /**
     * nvshmem_malloc for {@code group}: agreed with every rank first ({@link #agreeAllocation}), then
     * made by {@code malloc} within {@code timeout}. One heap call at a time in this rank (agreement
     * and call as one step, so two threads cannot make their calls in another order than the agreed
     * one). nvshmem_malloc waits inside for every PE and for the device, with no deadline of its own:
     * past {@code timeout} it is named and the heap is closed to this rank (NVSHMEM cannot take a call
     * back), so later heap calls are refused at once instead of waiting behind it.
     */
    public synchronized <T> T allocate(String group, long sizeBytes, Duration timeout, Supplier<T> malloc) {
        refuseAfterStuckHeapCall("nvshmem_malloc of " + sizeBytes + " bytes for group '" + group + "'");
        agreeAllocation(group, sizeBytes, timeout);
        AtomicReference<T> made = new AtomicReference<>();
        heapCall("nvshmem_malloc of " + sizeBytes + " bytes for group '" + group + "' (PE " + rank + ")",
                () -> made.set(malloc.get()), timeout);
        return made.get();
    }

    /** nvshmem_free for {@code group}, agreed and bounded like {@link #allocate}. */
    public synchronized void free(String group, long sizeBytes, Duration timeout, Runnable free) {
        refuseAfterStuckHeapCall("nvshmem_free of " + sizeBytes + " bytes for group '" + group + "'");
        agreeFree(group, sizeBytes, timeout);
        heapCall("nvshmem_free of " + sizeBytes + " bytes for group '" + group + "' (PE " + rank + ")", free, timeout);
    }

    private void refuseAfterStuckHeapCall(String what) {
        if (stuckCollectiveCall != null) {
            throw new IllegalStateException(what + " refused: " + stuckCollectiveCall + " never returned, so the NVSHMEM heap"
                    + " and teams are closed to this rank (their calls are collective, one at a time); restart the ranks");
        }
    }

    /**
     * A collective NVSHMEM call that every rank agreed on, bounded by {@code timeout}; past it the
     * heap and teams are closed to this rank (NVSHMEM cannot take a call back).
     */
    private void heapCall(String what, Runnable call, Duration timeout) {
        collectiveCall(what, call, timeout, "every rank agreed on it through the store");
    }

    private void collectiveCall(String what, Runnable call, Duration timeout, String afterAgreement) {
        try {
            awaitNvshmem(what, call, timeout, afterAgreement);
        } catch (NvshmemStuckException e) {
            stuckCollectiveCall = what;
            throw e;
        }
    }

    /** Agrees on an nvshmem_free, like {@link #agreeAllocation}. */
    public synchronized void agreeFree(String group, long sizeBytes, Duration timeout) {
        agreeHeapCall("free", group, sizeBytes, timeout);
    }

    private void agreeHeapCall(String kind, String group, long sizeBytes, Duration timeout) {
        requireJoined(kind);
        long call = heapCalls++;
        // Only an allocation's size depends on them; a free states -1.
        boolean allocate = kind.equals("allocate");
        HeapCall mine = new HeapCall(kind, call, sizeBytes, group, allocate ? this.calls.pushScratchBytes() : -1,
                allocate ? this.calls.ll128MaxBytes() : -1);
        List<byte[]> all;
        try {
            all = heap.allGather(mine.encode(), timeout).await().atMost(timeout.plusSeconds(5));
        } catch (RuntimeException e) {
            throw new IllegalStateException("agreeing on NVSHMEM heap call " + call + " (" + mine + ", collective over all "
                    + worldSize + " ranks) before making it: " + e.getMessage(), e);
        }
        List<HeapCall> calls = new ArrayList<>(all.size());
        for (byte[] b : all) {
            calls.add(HeapCall.decode(b));
        }
        HeapCall first = calls.get(0);
        boolean agree = calls.stream().allMatch(c -> c.kind.equals(first.kind) && c.sizeBytes == first.sizeBytes);
        if (!agree) {
            StringBuilder each = new StringBuilder();
            for (int r = 0; r < calls.size(); r++) {
                each.append(r == 0 ? "" : "; ").append("rank ").append(r).append(": ").append(calls.get(r));
            }
            throw new NvshmemMismatchException("the NVSHMEM heap is collective over all " + worldSize + " ranks, which must "
                    + "allocate and free the same sizes in the same order (whatever group each buffer is for), but heap "
                    + "call " + call + " differs: " + each + "; nothing was allocated or freed");
        }
        requireSameSetting(call, mine, calls, NvshmemCalls.PUSH_SCRATCH_VARIABLE, HeapCall::pushScratchBytes);
        requireSameSetting(call, mine, calls, NvshmemCalls.LL128_MAX_VARIABLE, HeapCall::ll128MaxBytes);
    }

    /** Refuses heap call {@code call} where the ranks state different values of a setting that sizes the pad region. */
    private void requireSameSetting(long call, HeapCall mine, List<HeapCall> calls, String variable,
            ToLongFunction<HeapCall> value) {
        long first = value.applyAsLong(calls.get(0));
        if (calls.stream().allMatch(c -> value.applyAsLong(c) == first)) {
            return;
        }
        StringBuilder each = new StringBuilder();
        for (int r = 0; r < calls.size(); r++) {
            each.append(r == 0 ? "" : ", ").append("rank ").append(r).append(": ").append(value.applyAsLong(calls.get(r)));
        }
        throw new NvshmemMismatchException("heap call " + call + " (" + mine + ") needs the same nvshmem_malloc size "
                + "on all " + worldSize + " ranks, but " + variable + ", which sizes each buffer's pad region, differs ("
                + each + "): set " + variable + " to the same value on every rank (unset is its default); nothing was "
                + "allocated");
    }

    /**
     * The NVSHMEM team of {@code worldRanks} (ascending, equally spaced): collective over every rank of
     * the world, members or not, which must all name the same ranks. Made once; later calls return it.
     * The split is bounded by {@code timeout} like a heap call (it waits inside NVSHMEM for every PE).
     */
    public synchronized NvshmemTeam team(List<Integer> worldRanks, Duration timeout) {
        requireJoined("team");
        refuseAfterStuckHeapCall("the NVSHMEM team of ranks " + worldRanks);
        if (sharedGpus != null) {
            throw new UnsupportedOperationException("NVSHMEM teams need one GPU per rank, but " + sharedGpus + ": NVSHMEM "
                    + "would end the process (teams are not supported with several PEs per GPU without MPS); symmem's "
                    + "buffers and collectives on a group work without a team");
        }
        List<Integer> ranks = List.copyOf(worldRanks);
        int[] shape = NvshmemTeam.stridedShape(ranks);
        if (ranks.get(ranks.size() - 1) >= worldSize) {
            throw new IllegalArgumentException("team ranks " + ranks + " go beyond the world of " + worldSize + " ranks");
        }
        byte[] mine = ranks.toString().getBytes(StandardCharsets.UTF_8);
        List<byte[]> all = teams.allGather(mine, timeout).await().atMost(timeout.plusSeconds(5));
        for (int r = 0; r < all.size(); r++) {
            String theirs = new String(all.get(r), StandardCharsets.UTF_8);
            if (!theirs.equals(ranks.toString())) {
                throw new NvshmemMismatchException("making an NVSHMEM team is collective over all " + worldSize + " ranks, "
                        + "which must name the same ranks: rank " + r + " asked for " + theirs + ", rank " + rank
                        + " for " + ranks);
            }
        }
        NvshmemTeam existing = teamsByRanks.get(ranks);
        if (existing != null) {
            return existing;
        }
        AtomicReference<Integer> split = new AtomicReference<>();
        heapCall("nvshmem_team_split_strided for ranks " + ranks + " (PE " + rank + ")",
                () -> split.set(calls.teamSplitStrided(shape[0], shape[1], shape[2])), timeout);
        int team = split.get();
        if (team >= 0) {
            for (int i = 0; i < ranks.size(); i++) {
                int worldPe = calls.teamTranslatePe(team, i);
                if (worldPe != ranks.get(i)) {
                    throw new IllegalStateException("NVSHMEM team of " + ranks + ": its member " + i + " is PE " + worldPe
                            + ", expected " + ranks.get(i));
                }
            }
        }
        NvshmemTeam made = new NvshmemTeam(ranks, shape[0], shape[1], team);
        teamsByRanks.put(ranks, made);
        return made;
    }

    public synchronized List<NvshmemTeam> teams() {
        return List.copyOf(teamsByRanks.values());
    }

    /**
     * Leaves NVSHMEM in order (PyTorch never does): collective over the world. Skipped, saying why,
     * when the world is broken (a dead PE never reaches NVSHMEM's barriers) or buffers still live.
     * Returns whether NVSHMEM was finalized.
     */
    public synchronized boolean finalizeWorld(Duration timeout) {
        if (finalized) {
            return true;
        }
        if (calls.aborted()) {
            LOG.warnf("NVSHMEM not finalized: a peer is gone, and NVSHMEM's finalize would wait for it");
            return false;
        }
        if (sharedGpus != null) {
            LOG.warnf("NVSHMEM not finalized: %s, and NVSHMEM ends the process on finalize then (several PEs per GPU "
                    + "without MPS)", sharedGpus);
            return false;
        }
        if (stuckCollectiveCall != null) {
            LOG.warnf("NVSHMEM not finalized: %s never returned, and NVSHMEM's finalize would wait behind it",
                    stuckCollectiveCall);
            return false;
        }
        int live = calls.liveBuffers();
        if (live > 0) {
            LOG.warnf("NVSHMEM not finalized: %d buffer(s) still live on its heap", live);
            return false;
        }
        bootstrap.barrier(timeout).await().atMost(timeout.plusSeconds(5));
        for (NvshmemTeam t : List.copyOf(teamsByRanks.values())) {
            if (t.isMember()) {
                collectiveCall("nvshmem_team_destroy of the team of ranks " + t.worldRanks() + " (PE " + rank + ")",
                        () -> calls.teamDestroy(t.team()), timeout, "every rank had reached the finalize barrier");
            }
            teamsByRanks.remove(t.worldRanks());
        }
        awaitNvshmem("NVSHMEM's finalize (PE " + rank + " of " + worldSize + ")", calls::finalizeWorld, timeout,
                "every rank had reached it");
        finalized = true;
        LOG.infof("NVSHMEM finalized (PE %d of %d)", rank, worldSize);
        return true;
    }

    private void requireJoined(String what) {
        if (finalized) {
            throw new IllegalStateException("NVSHMEM " + what + ": NVSHMEM was finalized in this process");
        }
    }

    /**
     * Runs a blocking NVSHMEM call on a thread of its own and waits for it up to {@code timeout}, or
     * until the process is aborted (a peer died). NVSHMEM's call cannot be cancelled: after a failure
     * here that thread stays blocked, and the rank should leave.
     */
    private void awaitNvshmem(String what, Runnable call, Duration timeout, String afterBarrier) {
        CompletableFuture<Void> done = CompletableFuture.runAsync(call, r -> {
            Thread t = new Thread(r, "symmem-nvshmem-call");
            t.setDaemon(true);
            t.start();
        });
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                done.get(ABORT_POLL_MS, TimeUnit.MILLISECONDS);
                return;
            } catch (TimeoutException e) {
                if (calls.aborted()) {
                    throw new NvshmemStuckException(what + " was abandoned: a peer is gone and NVSHMEM would wait for "
                            + "it for ever");
                }
                if (System.nanoTime() > deadline) {
                    throw new NvshmemStuckException(what + " did not finish within " + timeout.toMillis() + " ms although "
                            + afterBarrier);
                }
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                throw cause instanceof RuntimeException re ? re : new IllegalStateException(what + ": " + cause, cause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what);
            }
        }
    }

    /** One rank's statement of the heap call it is about to make. */
    private record HeapCall(String kind, long call, long sizeBytes, String group, long pushScratchBytes,
            long ll128MaxBytes) {
        byte[] encode() {
            byte[] k = kind.getBytes(StandardCharsets.UTF_8);
            byte[] g = group.getBytes(StandardCharsets.UTF_8);
            return ByteBuffer.allocate(4 + k.length + 16 + 4 + g.length + 16).putInt(k.length).put(k).putLong(call)
                    .putLong(sizeBytes).putInt(g.length).put(g).putLong(pushScratchBytes).putLong(ll128MaxBytes).array();
        }

        static HeapCall decode(byte[] bytes) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            byte[] k = new byte[b.getInt()];
            b.get(k);
            long call = b.getLong();
            long size = b.getLong();
            byte[] g = new byte[b.getInt()];
            b.get(g);
            long pushScratch = b.getLong();
            long ll128Max = b.getLong();
            return new HeapCall(new String(k, StandardCharsets.UTF_8), call, size, new String(g, StandardCharsets.UTF_8),
                    pushScratch, ll128Max);
        }

        @Override
        public String toString() {
            return kind + " " + sizeBytes + " bytes for group '" + group + "'";
        }
    }
}
