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
import io.symmem.store.StoreExchange;
import io.symmem.world.WorldMember;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

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
    private final List<AutoCloseable> open = new ArrayList<>();
    private boolean closed;

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
    public synchronized SymmetricBuffer allocate(DType dtype, long count) {
        checkOpen();
        Objects.requireNonNull(dtype, "dtype must not be null");
        long bytes = SymmetricBuffer.bytesOf(name, dtype, count);
        SymmetricMemory memory = member.allocator().allocate(exchange, bytes, config().timeout().rendezvous());
        return track(new SymmetricBuffer(this, memory, dtype, count, this::forget));
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
        Objects.requireNonNull(options, "options must not be null");
        return track(new BufferPool(this, new SymmetricMemPool(member.allocator(), exchange, options), this::forget));
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
        AllReduce.run(memory, algorithm, buffer.dtype(), op, buffer.count(), null, null, config().timeout().collective());
        memory.synchronize(null);
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
        AllGather.run(memory, buffer.dtype(), blockCount(buffer, "allGather"), null, null, config().timeout().collective());
        memory.synchronize(null);
    }

    /**
     * Reduce-scatter in place: the buffer is {@link #size()} blocks of {@code count / size} elements;
     * afterwards block r of rank r's buffer holds the reduction of block r over every rank.
     */
    public void reduceScatter(SymmetricBuffer buffer, ReduceOp op) {
        SymmetricMemory memory = mine(buffer, "reduceScatter");
        Objects.requireNonNull(op, "op must not be null");
        ReduceScatter.run(memory, buffer.dtype(), op, blockCount(buffer, "reduceScatter"), null, null,
                config().timeout().collective());
        memory.synchronize(null);
    }

    /** Returns once every rank of the group has called it; past {@code timeout}, fails naming who has not. */
    public void barrier(Duration timeout) {
        checkOpen();
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

    private SymmemConfig config() {
        return world.config();
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

    private <T extends AutoCloseable> T track(T resource) {
        open.add(resource);
        return resource;
    }

    private synchronized void forget(AutoCloseable resource) {
        open.remove(resource);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("group '" + name + "' is closed");
        }
    }

    /** Frees the buffers and pools of this group still open, newest first (collective, like their allocation). */
    @Override
    public void close() {
        List<AutoCloseable> left;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            left = new ArrayList<>(open);
        }
        RuntimeException first = null;
        for (int i = left.size() - 1; i >= 0; i--) {
            try {
                left.get(i).close();
            } catch (Exception e) {
                first = first == null ? (e instanceof RuntimeException re ? re : new IllegalStateException(e)) : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
