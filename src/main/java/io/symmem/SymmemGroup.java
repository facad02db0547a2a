package io.symmem;

import io.symmem.collective.AllGather;
import io.symmem.collective.AllReduce;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.collective.ReduceScatter;
import io.symmem.config.SymmemConfig;
import io.symmem.memory.PoolOptions;
import io.symmem.memory.SymmetricMemPool;
import io.symmem.memory.SymmetricMemory;
import io.symmem.store.GroupRanks;
import io.symmem.store.PrefixStore;
import io.symmem.store.Store;
import io.symmem.store.ExchangeMismatchException;
import io.symmem.store.StoreExchange;
import io.symmem.world.WorldMember;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Some ranks of a world that allocate symmetric buffers together and run collectives on them. Every
 * call here is collective: each rank of the group makes it, in the same order, with the same
 * arguments (a rank that does not arrive is named when the deadline passes; a rank that died, at
 * once). Made by {@link SymmemWorld#group()} (every rank) or {@link SymmemWorld#group(String, int...)}.
 *
 * <pre>{@code
 * SymmemGroup group = world.group();
 * try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 1 << 20)) {
 *     b.write(gradients);
 *     group.allReduce(b, ReduceOp.AVG, Algorithm.AUTO);
 *     b.read(gradients);
 * }
 * group.barrier(Duration.ofSeconds(10));
 * }</pre>
 *
 * Collectives return when this rank's result is in place (on GPUs the call waits for the device).
 * Closing the group frees its buffers and pools that are still open.
 */
public final class SymmemGroup implements AutoCloseable {
    private final SymmemWorld world;
    private final WorldMember member;
    private final String name;
    private final int[] worldRanks;
    private final StoreExchange exchange;
    private final DataMovers movers = new DataMovers(this);
    private final List<AutoCloseable> open = new ArrayList<>();
    private final ReentrantLock allocating = new ReentrantLock();
    private final Map<String, StoreExchange> namedExchanges = new HashMap<>();
    private final Map<String, Integer> poolsByThread = new HashMap<>();  // guarded by this (pool)
    private boolean closed;
    /** Why this group's generation of the world is gone (see {@link #retire}); null while it is current. */
    private volatile String lost;

    SymmemGroup(SymmemWorld world, WorldMember member, String name, int[] worldRanks) {
        this.world = world;
        this.member = member;
        this.name = name;
        this.worldRanks = worldRanks;
        this.exchange = member.exchange(name, GroupRanks.indexOf(worldRanks, world.rank()), worldRanks.length);
    }

    /** Every member gives the same ranks in the same order, or every member fails saying how they differ. */
    void agreeOnMembers(Duration timeout) {
        try {
            GroupRanks.agree(member.runStore(), name, worldRanks, world.rank(), timeout).await().atMost(timeout.plusSeconds(5));
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalStateException("group '" + name + "' of world ranks " + Arrays.toString(worldRanks)
                    + ": not every member made it (every one of them must call world.group with the same name and ranks): "
                    + e.getMessage(), e);
        }
    }

    public String name() {
        return name;
    }

    /** This process's rank in the group. */
    public int rank() {
        return exchange.rank();
    }

    /** Number of ranks in the group. */
    public int size() {
        return worldRanks.length;
    }

    /** The world rank of each group rank (index = group rank). */
    public int[] worldRanks() {
        return worldRanks.clone();
    }

    /**
     * A symmetric buffer of {@code count} elements of {@code dtype} on every rank of the group, each
     * mapping every peer's (one rendezvous; deadline SYMMEM_TIMEOUT_RENDEZVOUS). The ranks must ask for
     * the same size: otherwise each fails naming every rank's size. On the nvshmem backend every rank
     * of the world allocates at this point, each for its own group (NVSHMEM's heap is the world's).
     */
    public SymmetricBuffer allocate(DType dtype, long count) {
        checkOpen();
        IssueLane.refuseInGraph(name, "allocate");
        Objects.requireNonNull(dtype, "dtype must not be null");
        long bytes = SymmetricBuffer.bytesOf(name, dtype, count);
        // Paired across ranks by order: a second thread allocating at the same time would make the
        // order depend on the scheduler, and buffers of different threads would pair up silently.
        if (!allocating.tryLock()) {
            throw new IllegalStateException("allocate on group '" + name + "' from thread '"
                    + Thread.currentThread().getName() + "' refused: another thread of this rank is allocating in the"
                    + " group right now, and unnamed buffers pair up across ranks by the order of their allocation;"
                    + " allocate them from one thread, or name each one: allocate(name, dtype, count)");
        }
        try {
            // The thread's name pairs with the peers' (a crossing of two threads fails on every rank, naming both).
            String thread = Thread.currentThread().getName();
            SymmetricMemory memory;
            try {
                memory = member.allocator().allocate(exchange, "allocate on thread '" + thread + "'", bytes,
                        config().timeout().rendezvous());
            } catch (ExchangeMismatchException crossed) {
                throw new IllegalStateException("allocate on group '" + name + "' from thread '" + thread + "' refused on every"
                        + " rank: " + crossed.getMessage() + ". Unnamed buffers pair across ranks by the order of their"
                        + " allocation, so they are allocated from threads of the same name on every rank; allocate them from"
                        + " one thread, or name each one: allocate(name, dtype, count)", crossed);
            }
            return tracked(new SymmetricBuffer(this, memory, dtype, count, this::forget));
        } finally {
            allocating.unlock();
        }
    }

    /**
     * A symmetric buffer paired across ranks by {@code bufferName} instead of by order, so that
     * threads may allocate their buffers at the same time in any order (each rank names its buffers
     * alike; a name is used again only after the buffer of that name is closed on every rank). cuda and
     * host backends: on nccl and nvshmem an allocation is a collective of the whole communicator or
     * world, paired by order, so allocate there from one thread.
     */
    public SymmetricBuffer allocate(String bufferName, DType dtype, long count) {
        checkOpen();
        IssueLane.refuseInGraph(name, "allocate");
        Objects.requireNonNull(bufferName, "bufferName must not be null");
        Objects.requireNonNull(dtype, "dtype must not be null");
        if (bufferName.isEmpty() || bufferName.contains("/")) {
            throw new IllegalArgumentException("buffer name '" + bufferName + "' in group '" + name
                    + "': a name must be non-empty and without '/'");
        }
        String backend = member.allocator().backend().name();
        if (member.allocator().backend().isNccl() || member.allocator().backend().isNvshmem()) {
            throw new UnsupportedOperationException("allocate(\"" + bufferName + "\", ...) on group '" + name
                    + "': named buffers are for the host and cuda backends; on " + backend
                    + " every allocation is a collective of the whole communicator or world, paired by order:"
                    + " allocate from one thread with allocate(dtype, count)");
        }
        long bytes = SymmetricBuffer.bytesOf(name, dtype, count);
        StoreExchange named;
        synchronized (this) {
            named = namedExchanges.computeIfAbsent(bufferName,
                    // ':' appears in no group name, so these exchanges never meet a group's.
                    n -> member.exchange(name + ":buffer:" + n, rank(), size()));
        }
        synchronized (named) {
            SymmetricMemory memory = member.allocator().allocate(named, bytes, config().timeout().rendezvous());
            return tracked(new SymmetricBuffer(this, memory, dtype, count, this::forget));
        }
    }

    /**
     * A pool of this group's symmetric memory with the configured settings (SYMMEM_POOL_SEGMENT,
     * SYMMEM_POOL_LIMIT, SYMMEM_POOL_STRICT): many buffers, one rendezvous per segment. Collective,
     * like its allocations.
     */
    public BufferPool pool() {
        SymmemConfig.Pool settings = config().pool();
        return pool(SymmetricMemPool.fromSettings(settings.segment(), settings.limit().orElse(0L), settings.strict(),
                false, config().timeout().rendezvous()));
    }

    /** A pool of this group's symmetric memory with explicit options. */
    public synchronized BufferPool pool(PoolOptions options) {
        checkOpen();
        IssueLane.refuseInGraph(name, "pool");
        Objects.requireNonNull(options, "options must not be null");
        return track(new BufferPool(this, new SymmetricMemPool(member.allocator(), poolExchange(), options), this::forget));
    }

    /**
     * All-reduce of the whole buffer, in place: afterwards every rank holds the reduction over the
     * group's ranks (in rank order, so every rank gets the same bits). Deadline SYMMEM_TIMEOUT_COLLECTIVE.
     * TWO_SHOT and ONE_SHOT are the algorithms of symm_mem's all-reduce; AUTO picks by size and group.
     */
    public void allReduce(SymmetricBuffer buffer, ReduceOp op, Algorithm algorithm) {
        SymmetricMemory memory = mine(buffer, "allReduce");
        Objects.requireNonNull(op, "op must not be null");
        Objects.requireNonNull(algorithm, "algorithm must not be null");
        IssueLane lane = buffer.lane();
        buffer.use("allReduce", () -> lane.issue(name, "allReduce", () -> {
            AllReduce.run(memory, algorithm, buffer.dtype(), op, buffer.count(), null, lane.stream(),
                    config().timeout().collective());
            lane.awaitResult(memory);
        }));
    }

    /** {@link #allReduce(SymmetricBuffer, ReduceOp, Algorithm)} with {@link Algorithm#AUTO}. */
    public void allReduce(SymmetricBuffer buffer, ReduceOp op) {
        allReduce(buffer, op, Algorithm.AUTO);
    }

    /**
     * All-gather in place: the buffer is {@link #size()} blocks of {@code count / size} elements; rank r
     * contributes block r of its buffer, and afterwards every rank's buffer holds every block.
     */
    public void allGather(SymmetricBuffer buffer) {
        SymmetricMemory memory = mine(buffer, "allGather");
        long blocks = blockCount(buffer, "allGather");
        IssueLane lane = buffer.lane();
        buffer.use("allGather", () -> lane.issue(name, "allGather", () -> {
            AllGather.run(memory, buffer.dtype(), blocks, null, lane.stream(), config().timeout().collective());
            lane.awaitResult(memory);
        }));
    }

    /**
     * Reduce-scatter in place: the buffer is {@link #size()} blocks of {@code count / size} elements;
     * afterwards block r of rank r's buffer holds the reduction of block r over every rank.
     */
    public void reduceScatter(SymmetricBuffer buffer, ReduceOp op) {
        SymmetricMemory memory = mine(buffer, "reduceScatter");
        Objects.requireNonNull(op, "op must not be null");
        long blocks = blockCount(buffer, "reduceScatter");
        IssueLane lane = buffer.lane();
        buffer.use("reduceScatter", () -> lane.issue(name, "reduceScatter", () -> {
            ReduceScatter.run(memory, buffer.dtype(), op, blocks, null, lane.stream(), config().timeout().collective());
            lane.awaitResult(memory);
        }));
    }

    /**
     * Broadcast in place: afterwards every rank's buffer holds what rank {@code root} (a rank of this
     * group, 0..size()-1) had in its buffer. The root's buffer is only read.
     */
    public void broadcast(SymmetricBuffer buffer, int root) {
        movers.broadcast(buffer, mine(buffer, "broadcast"), root);
    }

    /**
     * All-to-all in place: the buffer is {@link #size()} blocks of {@code count / size} elements; block p of
     * rank r goes to rank p, where it becomes block r.
     */
    public void allToAll(SymmetricBuffer buffer) {
        movers.allToAll(buffer, mine(buffer, "allToAll"), blockCount(buffer, "allToAll"));
    }

    /**
     * How many elements a buffer holds for {@link #allToAllV}: its last 8 x (3 x size() + 1) bytes, rounded to
     * whole int64 slots, hold the counts sent and received, and input and output use the elements before them.
     */
    public long allToAllVCapacity(SymmetricBuffer buffer) {
        mine(buffer, "allToAllVCapacity");
        return movers.capacity(buffer, "allToAllVCapacity");
    }

    /**
     * All-to-all with counts of one's own, in place (a shuffle of variable-sized partitions). This rank's
     * input is the buffer's first sum(sendCounts) elements: sendCounts[0] for rank 0, then sendCounts[1]
     * for rank 1, and so on. Afterwards the buffer holds what every rank sent to this one, packed in rank
     * order, and the result says how many elements came from each rank. Input and output fit in
     * {@link #allToAllVCapacity}. Counts that do not fit (negative, more input than that, more output
     * than a rank holds) fail on every rank with the same message naming the rank, the peer and the
     * sizes, and leave the buffer as it was.
     */
    public long[] allToAllV(SymmetricBuffer buffer, long[] sendCounts) {
        return movers.allToAllV(buffer, mine(buffer, "allToAllV"), sendCounts);
    }

    /**
     * Captures the collectives {@code body} issues on {@code buffer} (or, for a pool block, on any block of
     * its pool) into a graph to replay: the way inference servers run small all-reduces. Collective like
     * the calls it holds: every rank captures the same calls and replays the graph as often, in the same
     * order with the buffer's other collectives.
     *
     * <pre>{@code
     * try (CapturedGraph g = group.capture(buffer, () -> group.allReduce(buffer, ReduceOp.SUM, Algorithm.ONE_SHOT))) {
     *     for (float[] step : steps) {
     *         buffer.write(step);
     *         g.replay();          // runs the captured all-reduce on the new input, returns when it is done
     *         buffer.read(step);
     *     }
     * }
     * }</pre>
     *
     * Inside {@code body} the calls are recorded, not run (device backends: a CUDA graph; the host backend
     * records {@code body} itself and runs it at each replay), so {@code body} must not read or write the
     * buffer (refused), nor issue collectives on a buffer of another lane (refused: one graph, one stream).
     * Device-side deadlines hold inside the graph: a rank that does not replay makes the others' replay
     * fail with the collective deadline error naming it.
     */
    public CapturedGraph capture(SymmetricBuffer buffer, Runnable body) {
        SymmetricMemory memory = mine(buffer, "capture");
        Objects.requireNonNull(body, "body must not be null");
        IssueLane lane = buffer.lane();
        CapturedGraph graph = memory.isDevice()
                ? CapturedGraph.captured(name, lane, memory, body)
                : CapturedGraph.recorded(name, lane, body);
        return tracked(graph.closingWithin(closePatience()).onClose(this::forget));
    }

    /** Returns once every rank of the group has called it; past {@code timeout}, fails naming who has not. */
    public void barrier(Duration timeout) {
        checkOpen();
        IssueLane.refuseInGraph(name, "barrier");
        Objects.requireNonNull(timeout, "timeout must not be null");
        exchange.barrier(timeout).await().atMost(timeout.plusSeconds(5));
    }

    /**
     * A store for this group's own keys (under {@code group/<name>/} of the world's store): TCPStore's
     * operations, for small values its ranks share. Closing it does nothing; the world owns the store.
     */
    public Store store() {
        return new PrefixStore("group/" + name, member.runStore());
    }

    /**
     * Where a new pool's rounds pair. On host and cuda, an exchange of its own, named by the creating
     * thread's name and how many pools that thread made in this group: the k-th pool of thread A pairs
     * with the k-th pool of thread A on every rank, whatever the other threads do (a pool per thread
     * works). On nccl and nvshmem a segment is a collective of the whole communicator or world, paired
     * by order there, so pools share the group's exchange and a crossing fails on every rank instead.
     */
    private StoreExchange poolExchange() {
        if (member.allocator().backend().isNccl() || member.allocator().backend().isNvshmem()) {
            return exchange;
        }
        String thread = Thread.currentThread().getName();
        int k = poolsByThread.merge(thread, 1, Integer::sum) - 1;
        // ':' appears in no group name, and the encoded thread name has no '/', so these never meet a group's.
        return member.exchange(name + ":pool:" + java.net.URLEncoder.encode(thread, java.nio.charset.StandardCharsets.UTF_8)
                + ":" + k, rank(), size());
    }

    private SymmemConfig config() {
        return world.config();
    }

    /** The deadline of a collective, and of a signal or wait on one of this group's buffers. */
    Duration collectiveTimeout() {
        return config().timeout().collective();
    }

    /** How long closing a buffer waits for a call on it: past its own deadline the call has returned. */
    java.time.Duration closePatience() {
        return config().timeout().collective().plusSeconds(5);
    }

    private SymmetricMemory mine(SymmetricBuffer buffer, String what) {
        checkOpen();
        Objects.requireNonNull(buffer, "buffer must not be null");
        if (buffer.group() != this) {
            throw new IllegalArgumentException(what + " on group '" + name + "': the buffer belongs to group '"
                    + buffer.group().name() + "'");
        }
        return buffer.memory();
    }

    private long blockCount(SymmetricBuffer buffer, String what) {
        if (buffer.count() % size() != 0) {
            throw new IllegalArgumentException(what + " on group '" + name + "': the buffer's " + buffer.count()
                    + " elements do not split into " + size() + " equal blocks, one per rank");
        }
        return buffer.count() / size();
    }

    private synchronized <T extends AutoCloseable> T tracked(T resource) {
        return track(resource);
    }

    private <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    private synchronized void forget(AutoCloseable resource) {
        open.remove(resource);
    }

    private void checkOpen() {
        String why = lost;
        if (why != null) {
            throw new GenerationLostException("group '" + name + "': " + why);
        }
        if (closed) {
            throw new IllegalStateException("group '" + name + "' is closed");
        }
    }

    /**
     * The world formed again as a new generation: this group and its buffers are of the lost one. Frees
     * what can be freed (nothing waits for the peers, whose calls failed with the world), and every later
     * call says {@code why}.
     */
    void retire(String why) {
        lost = why;
        try {
            close();
        } catch (RuntimeException e) {
            org.jboss.logging.Logger.getLogger(SymmemGroup.class).debugf("group '%s' of the lost generation did not close "
                    + "cleanly: %s", name, e.getMessage());
        }
    }

    /** Why this group's generation of the world is gone, or null while it is current. */
    String lostGeneration() {
        return lost;
    }

    /**
     * Frees the buffers and pools of this group still open, newest first (collective, like their
     * allocation). One whose close is refused stays open (and the first refusal is thrown after the others
     * were closed); the group takes no new work, and closing it again frees what is left.
     */
    @Override
    public void close() {
        List<AutoCloseable> left;
        synchronized (this) {
            // A close that a refusing buffer or pool stopped left them open: closing again frees them.
            if (closed && open.isEmpty()) {
                return;
            }
            closed = true;
            left = new ArrayList<>(open);
        }
        RuntimeException first = null;
        for (int i = left.size() - 1; i >= 0; i--) {
            try {
                left.get(i).close();
            } catch (CloseRefusedException e) {
                // Thrown before any other error: the world must not close the backend under a buffer in use.
                first = first instanceof CloseRefusedException ? first : e;
            } catch (Exception e) {
                first = first == null ? (e instanceof RuntimeException re ? re : new IllegalStateException(e)) : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
