package io.symmem;

import io.symmem.collective.DType;
import io.symmem.memory.PoolFigures;
import io.symmem.memory.SymmetricMemPool;
import io.symmem.memory.SymmetricMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Symmetric buffers of one group carved out of shared segments: one rendezvous per segment instead of
 * one per buffer (docs/mempool.md). Allocation and freeing are collective: every rank of the group
 * allocates and closes the same sizes in the same order (the ranks compare their sequences at each
 * new segment, and fail naming the first difference). Made by {@link SymmemGroup#pool()}.
 *
 * <pre>{@code
 * try (BufferPool pool = group.pool()) {
 *     for (Layer layer : layers) {
 *         try (SymmetricBuffer b = pool.allocate(DType.BFLOAT16, layer.size())) {
 *             group.allReduce(b, ReduceOp.SUM, Algorithm.AUTO);
 *         }
 *     }
 * }
 * }</pre>
 */
public final class BufferPool implements AutoCloseable {
    private final SymmemGroup group;
    private final SymmetricMemPool pool;
    private final Consumer<BufferPool> onClose;
    private final List<SymmetricBuffer> open = new ArrayList<>();
    private final ReentrantLock allocating = new ReentrantLock();
    private IssueLane lane;  // shared by every block: made with the first one
    private Thread owner;    // the first thread that allocated (claimForThisThread)
    private boolean closed;
    private boolean released;  // the segments are freed: a close that stopped at a refusing block has not done this

    BufferPool(SymmemGroup group, SymmetricMemPool pool, Consumer<BufferPool> onClose) {
        this.group = group;
        this.pool = pool;
        this.onClose = onClose;
    }

    /** A buffer of {@code count} elements of {@code dtype} from the pool (collective). */
    public SymmetricBuffer allocate(DType dtype, long count) {
        Objects.requireNonNull(dtype, "dtype must not be null");
        long bytes = SymmetricBuffer.bytesOf(group.name(), dtype, count);
        // Blocks pair up across ranks by the order of their allocation: a second thread allocating at
        // the same time would make that order the scheduler's.
        if (!allocating.tryLock()) {
            throw new IllegalStateException("allocate from the pool of group '" + group.name() + "' on thread '"
                    + Thread.currentThread().getName() + "' refused: another thread of this rank is allocating from"
                    + " it right now, and blocks pair up across ranks by the order of their allocation; allocate from"
                    + " one thread, or give each thread a pool of its own");
        }
        try {
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the pool of group '" + group.name() + "' is closed");
                }
                claimForThisThread();
            }
            SymmetricMemory block = pool.allocate(bytes);
            synchronized (this) {
                if (lane == null) {
                    lane = new IssueLane("the blocks of a pool of group '" + group.name() + "'", block, true);
                }
                SymmetricBuffer buffer = new SymmetricBuffer(group, block, dtype, count, this::forget, lane, false);
                open.add(buffer);
                return buffer;
            }
        } finally {
            allocating.unlock();
        }
    }

    /**
     * The first thread that allocates from this pool owns it; any other is refused. A pool's blocks pair
     * across ranks by the order of their allocation, so blocks from two threads (one after the other,
     * not only at once) would pair one thread's block with another's on a peer. The owner's name goes
     * with the pool's rounds, so a rank whose pool another thread owns fails them, naming both.
     */
    private void claimForThisThread() {
        Thread me = Thread.currentThread();
        if (owner == null) {
            owner = me;
            pool.pairAs("pool allocations of thread '" + me.getName() + "'");
        } else if (owner != me) {
            throw new IllegalStateException("allocate from the pool of group '" + group.name() + "' on thread '" + me.getName()
                    + "' refused: the pool belongs to thread '" + owner.getName() + "', the first that allocated from it"
                    + " (blocks pair across ranks by the order of their allocation, so two threads could pair one's block"
                    + " with the other's on a peer); give each thread a pool of its own");
        }
    }

    /** What the pool holds and hands out now: reserved, allocated, free, segments, fragmentation. */
    public PoolFigures figures() {
        return pool.figures();
    }

    /** The pool underneath (recordStream, verify). */
    public SymmetricMemPool memPool() {
        return pool;
    }

    private synchronized void forget(SymmetricBuffer buffer) {
        open.remove(buffer);
    }

    /**
     * Frees the buffers still open, newest first, then the pool's segments (collective). A block whose
     * close is refused (a call still running on it, a captured graph still open) stops the close there:
     * the pool takes no new allocations, keeps what is left, and closing it again frees the rest.
     */
    @Override
    public void close() {
        List<SymmetricBuffer> left;
        synchronized (this) {
            if (released) {
                return;
            }
            closed = true;
            left = new ArrayList<>(open);
        }
        for (int i = left.size() - 1; i >= 0; i--) {
            left.get(i).close();
        }
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
        }
        try {
            if (lane != null) {
                lane.close();
            }
            pool.close();
        } finally {
            onClose.accept(this);
        }
    }
}
