package io.symmem.memory;

import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeStream;
import io.symmem.nativ.NativeStreamMarker;
import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Symmetric memory for many tensors with one rendezvous per segment (docs/mempool.md). A pool of one
 * group reserves symmetric segments ({@link SymmetricAllocator#allocate}, one rendezvous each) and
 * hands out blocks of them as {@link SymmetricMemory} slices: rank r's block is rank r's segment
 * plus the block's offset, so collectives, copies and signals work on a block exactly as on a
 * dedicated buffer, with no rendezvous of its own.
 * <p>
 * Allocation is collective: every rank of the group allocates, frees and {@link #recordStream}s its
 * blocks in the same order with the same sizes. The sub-allocator is deterministic, so equal
 * sequences give equal offsets on every rank. The ranks compare their sequences at every new
 * segment (and at every allocation with {@link PoolOptions#strict()}); a difference fails with a
 * {@link PoolMismatchException} naming the rank and the operations.
 * <p>
 * Blocks of one segment share its signal pad: their signals and collectives are one sequence
 * (issue them from one thread at a time, in the same order on every rank; the native layer refuses a
 * second thread and, on GPUs, orders the work across streams). Thread-safe; calls are serialised.
 */
public final class SymmetricMemPool implements AutoCloseable {
    /** A block handed out and not yet closed. */
    private static final class LiveBlock {
        final PoolBlock block;
        final long requested;
        final NativeBuffer slice;
        SymmetricMemory memory;
        List<NativeStream> streams;  // recordStream'ed; null until one is; a null element = default stream

        LiveBlock(PoolBlock block, long requested, NativeBuffer slice) {
            this.block = block;
            this.requested = requested;
            this.slice = slice;
        }
    }

    private final SymmetricAllocator allocator;
    private final StoreExchange group;
    private final PoolOptions options;
    private final BlockAllocator blocks;
    private final AllocationSequence sequence = new AllocationSequence();
    private final List<SymmetricMemory> segments = new ArrayList<>();
    private final Map<SymmetricMemory, LiveBlock> live = new HashMap<>();
    private long requested;
    private long allocations;
    private long frees;
    private boolean closed;

    /** An empty pool: its first allocation adds the first segment (collective, like every allocation). */
    private volatile String pairing = "pool";

    public SymmetricMemPool(SymmetricAllocator allocator, StoreExchange group, PoolOptions options) {
        if (options.alignment() < NativeBuffer.sliceAlignment()) {
            throw new IllegalArgumentException("pool alignment " + options.alignment() + " is below the native slice "
                    + "alignment " + NativeBuffer.sliceAlignment());
        }
        this.allocator = allocator;
        this.group = group;
        this.options = options;
        this.blocks = new BlockAllocator(options.alignment(), options.noSplit());
    }

    public String group() {
        return group.groupName();
    }

    public PoolOptions options() {
        return options;
    }

    /**
     * A block of {@code bytes} (collective: every rank of the group asks for the same sequence). Served
     * from free ranges when one fits; else, when freed blocks wait for their streams, after waiting for
     * those streams; else from a new segment (one rendezvous). Exceeding the pool's limit, or memory
     * that cannot be had, is a {@link PoolExhaustedException} with the pool's figures: never a fallback.
     */
    public synchronized SymmetricMemory allocate(long bytes) {
        checkOpen();
        if (bytes <= 0) {
            throw new IllegalArgumentException("pool block size must be positive, got " + bytes + " bytes");
        }
        if (blocks.rounded(bytes) < 0) {
            throw new IllegalArgumentException("pool block size " + bytes + " bytes is too large");
        }
        sequence.record(AllocationSequence.ALLOCATE, bytes, 0);
        allocations++;
        if (options.strict()) {
            agree("allocation #" + sequence.count() + " (" + bytes + " bytes)", 0);
        }
        PoolBlock block = blocks.allocate(bytes);
        if (block == null && blocks.hasHeld()) {
            blocks.reclaimHeld(options.timeout());
            block = blocks.allocate(bytes);
        }
        if (block == null) {
            addSegmentFor(bytes);
            block = blocks.allocate(bytes);
        }
        NativeBuffer slice;
        try {
            slice = segments.get(block.segment()).nativeBuffer().slice(block.offset(), bytes);
        } catch (RuntimeException e) {
            blocks.free(block, List.of());
            throw e;
        }
        LiveBlock lb = new LiveBlock(block, bytes, slice);
        SymmetricMemory segment = segments.get(block.segment());
        lb.memory = new SymmetricMemory(slice, group.groupName(), group.rank(), group.worldSize(),
                segment.defaultTimeout(), () -> release(lb));
        live.put(lb.memory, lb);
        requested += bytes;
        return lb.memory;
    }

    /**
     * Marks {@code memory} (a live block of this pool) as used on {@code stream} (null = the default
     * stream): when it is closed, it is not handed out again before that stream has passed the close.
     * Part of the collective sequence: every rank records the same streams' uses in the same order.
     */
    public synchronized void recordStream(SymmetricMemory memory, NativeStream stream) {
        LiveBlock lb = live.get(memory);
        if (lb == null) {
            throw new IllegalArgumentException("recordStream: the memory is not a live block of the pool of group '"
                    + group.groupName() + "' (closed already, or from another pool or allocator)");
        }
        sequence.record(AllocationSequence.RECORD_STREAM, lb.block.segment(), lb.block.offset());
        if (lb.streams == null) {
            lb.streams = new ArrayList<>(2);
        }
        for (NativeStream s : lb.streams) {
            if (s == stream) {
                return;
            }
        }
        lb.streams.add(stream);
    }

    /** SymmetricMemory.close of a block. */
    private synchronized void release(LiveBlock lb) {
        sequence.record(AllocationSequence.FREE, lb.block.segment(), lb.block.offset());
        frees++;
        live.remove(lb.memory);
        requested -= lb.requested;
        lb.slice.close();
        // Host streams are synchronous: nothing can still be running on the block.
        if (lb.streams == null || !allocator.backend().isDevice()) {
            blocks.free(lb.block, List.of());
            return;
        }
        List<StreamMarker> markers = new ArrayList<>(lb.streams.size());
        try {
            for (NativeStream s : lb.streams) {
                markers.add(new NativeMarker(new NativeStreamMarker(allocator.backend(), s)));
            }
        } catch (RuntimeException e) {
            // Without a marker the block cannot be known to be unused: keep it out of circulation.
            markers.forEach(StreamMarker::close);
            throw new IllegalStateException("could not record a stream marker for the freed block " + lb.block
                    + "; it stays allocated", e);
        }
        blocks.free(lb.block, markers);
    }

    /** Compares every rank's allocation sequence now (collective): fails naming the first rank that differs. */
    public synchronized void verify() {
        checkOpen();
        agree("verify after " + sequence.count() + " operations", 0);
    }

    public synchronized PoolFigures figures() {
        return new PoolFigures(group.groupName(), allocator.backend().name(), blocks.reservedBytes(),
                blocks.allocatedBytes(), requested, blocks.heldBytes(), blocks.peakAllocatedBytes(), blocks.freeBytes(),
                blocks.largestFreeBytes(), blocks.segments(), blocks.liveBlocks(), blocks.fragmentation(), allocations,
                frees, options.segmentBytes(), options.alignment(), options.noSplit());
    }

    private void addSegmentFor(long bytes) {
        long need = blocks.rounded(bytes);
        long segmentBytes = options.noSplit() ? need : Math.max(options.segmentBytes(), need);
        if (options.limitBytes() > 0 && blocks.reservedBytes() + segmentBytes > options.limitBytes()) {
            throw exhausted(bytes, "a new segment of " + segmentBytes + " bytes would pass the pool's limit of "
                    + options.limitBytes() + " bytes (SYMMEM_POOL_LIMIT)", null);
        }
        agree("segment " + blocks.segments() + " (for " + bytes + " bytes)", segmentBytes);
        SymmetricMemory segment;
        try {
            segment = allocator.allocate(group, pairing, segmentBytes, options.timeout());
        } catch (NativeException.Timeout | NativeException.Aborted | NativeException.Mismatch e) {
            throw e;
        } catch (NativeException e) {
            throw exhausted(bytes, "a new segment of " + segmentBytes + " bytes could not be allocated: " + e.getMessage(), e);
        }
        segments.add(segment);
        blocks.addSegment(segmentBytes);
    }

    private PoolExhaustedException exhausted(long bytes, String why, Throwable cause) {
        PoolFigures f = figures();
        return new PoolExhaustedException("pool allocation of " + bytes + " bytes failed: " + why + "; "
                + f.summary() + " (no fallback to memory outside the pool)", f, cause);
    }

    private void agree(String what, long segmentBytes) {
        byte[] mine = PoolAgreement.of(sequence, segmentBytes).encode();
        Duration t = options.timeout();
        List<byte[]> raw = group.allGather(pairing, mine, t).await().atMost(t.plusSeconds(5));
        List<PoolAgreement> all = new ArrayList<>(raw.size());
        for (int r = 0; r < raw.size(); r++) {
            all.add(PoolAgreement.decode(raw.get(r), r));
        }
        PoolAgreement.check(group.groupName(), what, all);
    }

    /**
     * The label this pool's rounds carry (who allocates from it, e.g. its thread): a rank whose pool
     * round carries another label fails that round on every rank, naming both, instead of pairing its
     * segment with another pool's. Set before the first allocation.
     */
    public void pairAs(String label) {
        this.pairing = java.util.Objects.requireNonNull(label, "label must not be null");
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the pool of group '" + group.groupName() + "' is closed");
        }
    }

    /** Number of blocks handed out and not closed. */
    public synchronized int liveBlocks() {
        return live.size();
    }

    /** For tests: the sub-allocator's invariants hold (throws naming the violation). */
    synchronized void checkInvariants() {
        blocks.checkInvariants();
    }

    /** Named for messages and metrics: the group and the options that shape it. */
    public static PoolOptions fromSettings(long segmentBytes, long limitBytes, boolean strict, boolean noSplit,
            Duration timeout) {
        return new PoolOptions(segmentBytes, PoolOptions.DEFAULT_ALIGNMENT, noSplit, limitBytes, strict, timeout);
    }

    /**
     * Frees the segments (on nvshmem collectively, in the same order on every rank). Refused while
     * blocks are live, since their slices borrow the segments; waits for freed blocks' streams first.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        if (!live.isEmpty()) {
            long bytes = live.values().stream().mapToLong(b -> b.requested).sum();
            throw new IllegalStateException("the pool of group '" + group.groupName() + "' still has " + live.size()
                    + " live block(s) (" + bytes + " bytes requested): close them before the pool");
        }
        blocks.reclaimHeld(options.timeout());
        closed = true;
        RuntimeException first = null;
        for (int i = segments.size() - 1; i >= 0; i--) {
            try {
                segments.get(i).close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        segments.clear();
        if (first != null) {
            throw first;
        }
    }

    /** The native marker as the sub-allocator sees it. */
    private record NativeMarker(NativeStreamMarker marker) implements StreamMarker {
        @Override
        public boolean passed() {
            return marker.passed();
        }

        @Override
        public void await(Duration timeout) {
            marker.await(timeout);
        }

        @Override
        public void close() {
            marker.close();
        }
    }
}
