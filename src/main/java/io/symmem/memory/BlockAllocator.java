package io.symmem.memory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The pool's sub-allocator: best-fit ranges of segments, freed ranges coalesced with their free
 * neighbours, and blocks freed while streams still used them held back until those streams pass.
 * <p>
 * It is deterministic on purpose: its answers depend only on the sequence of calls, never on time or
 * on how far a stream has got. Every rank runs the same sequence, so every rank hands out the same
 * offsets, which is what lets a block's peer address be the peer's segment base plus the offset with
 * no rendezvous. That is why held-back blocks are not reclaimed when their markers happen to pass,
 * but only by {@link #reclaimHeld}, which the pool calls at a point of the sequence (an allocation
 * nothing free can serve) and which waits for every marker.
 * Not thread-safe: the pool serialises calls.
 */
final class BlockAllocator {
    /** Best fit: smallest size first; ties by segment, then offset, so the choice is the same everywhere. */
    private static final Comparator<PoolBlock> BY_SIZE = Comparator.comparingLong(PoolBlock::size)
            .thenComparingInt(PoolBlock::segment).thenComparingLong(PoolBlock::offset);

    private record Held(PoolBlock block, List<? extends StreamMarker> markers) {
    }

    private final long alignment;
    private final boolean noSplit;
    private final List<Long> segmentSizes = new ArrayList<>();
    private final TreeSet<PoolBlock> freeBySize = new TreeSet<>(BY_SIZE);
    private final List<NavigableMap<Long, PoolBlock>> freeByOffset = new ArrayList<>();
    private final Set<PoolBlock> live = new HashSet<>();
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private long reserved;
    private long allocated;
    private long heldBytes;
    private long peakAllocated;

    /** alignment: a power of two; every block's offset and size are multiples of it. */
    BlockAllocator(long alignment, boolean noSplit) {
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("pool alignment must be a power of two, got " + alignment);
        }
        this.alignment = alignment;
        this.noSplit = noSplit;
    }

    long alignment() {
        return alignment;
    }

    boolean noSplit() {
        return noSplit;
    }

    /** bytes rounded up to the alignment (at least one unit); -1 when that overflows. */
    long rounded(long bytes) {
        long r = (Math.max(bytes, 1) + alignment - 1) & -alignment;
        return r <= 0 ? -1 : r;
    }

    /** Adds a segment of {@code size} bytes (a multiple of the alignment), all free; returns its number. */
    int addSegment(long size) {
        if (size <= 0 || size % alignment != 0) {
            throw new IllegalArgumentException("segment size " + size + " is not a positive multiple of " + alignment);
        }
        int id = segmentSizes.size();
        segmentSizes.add(size);
        freeByOffset.add(new TreeMap<>());
        reserved += size;
        insertFree(new PoolBlock(id, 0, size));
        return id;
    }

    /**
     * A block of at least {@code bytes} from the free ranges (best fit), or null when none fits. Split
     * mode: the block is {@code bytes} rounded up and the rest of the range stays free. No-split mode:
     * the block is the whole range.
     */
    PoolBlock allocate(long bytes) {
        long need = rounded(bytes);
        if (need < 0) {
            return null;
        }
        PoolBlock range = freeBySize.ceiling(new PoolBlock(-1, -1, need));
        if (range == null) {
            return null;
        }
        removeFree(range);
        PoolBlock block = range;
        if (!noSplit && range.size() > need) {
            block = new PoolBlock(range.segment(), range.offset(), need);
            insertFree(new PoolBlock(range.segment(), range.offset() + need, range.size() - need));
        }
        live.add(block);
        allocated += block.size();
        peakAllocated = Math.max(peakAllocated, allocated);
        return block;
    }

    /**
     * Returns a live block. With no markers it is free at once (coalesced); otherwise it is held until
     * {@link #reclaimHeld}. The allocator owns the markers from here on (it closes them).
     */
    void free(PoolBlock block, List<? extends StreamMarker> markers) {
        if (!live.remove(block)) {
            throw new IllegalArgumentException("block " + block + " is not a live block of this pool (freed twice?)");
        }
        allocated -= block.size();
        if (markers.isEmpty()) {
            coalesceAndInsert(block);
        } else {
            held.addLast(new Held(block, List.copyOf(markers)));
            heldBytes += block.size();
        }
    }

    boolean hasHeld() {
        return !held.isEmpty();
    }

    /**
     * Waits for every held block's markers (oldest first) and frees them all. A marker that does not
     * pass in time fails with the marker's message, and that block and the younger ones stay held.
     */
    void reclaimHeld(Duration timeout) {
        while (!held.isEmpty()) {
            Held h = held.peekFirst();
            for (StreamMarker m : h.markers()) {
                m.await(timeout);
            }
            held.removeFirst();
            h.markers().forEach(StreamMarker::close);
            heldBytes -= h.block().size();
            coalesceAndInsert(h.block());
        }
    }

    private void coalesceAndInsert(PoolBlock block) {
        NavigableMap<Long, PoolBlock> free = freeByOffset.get(block.segment());
        long start = block.offset();
        long end = block.end();
        Map.Entry<Long, PoolBlock> below = free.lowerEntry(start);
        if (below != null && below.getValue().end() == start) {
            start = below.getValue().offset();
            removeFree(below.getValue());
        }
        PoolBlock above = free.get(end);
        if (above != null) {
            end = above.end();
            removeFree(above);
        }
        insertFree(new PoolBlock(block.segment(), start, end - start));
    }

    private void insertFree(PoolBlock range) {
        freeBySize.add(range);
        freeByOffset.get(range.segment()).put(range.offset(), range);
    }

    private void removeFree(PoolBlock range) {
        freeBySize.remove(range);
        freeByOffset.get(range.segment()).remove(range.offset());
    }

    // ---- figures ---------------------------------------------------------------------------------

    long reservedBytes() {
        return reserved;
    }

    long allocatedBytes() {
        return allocated;
    }

    long peakAllocatedBytes() {
        return peakAllocated;
    }

    long heldBytes() {
        return heldBytes;
    }

    int segments() {
        return segmentSizes.size();
    }

    long segmentSize(int segment) {
        return segmentSizes.get(segment);
    }

    int liveBlocks() {
        return live.size();
    }

    long freeBytes() {
        return reserved - allocated - heldBytes;
    }

    long largestFreeBytes() {
        return freeBySize.isEmpty() ? 0 : freeBySize.last().size();
    }

    int freeRanges() {
        return freeBySize.size();
    }

    /**
     * 1 - largest free range / all free bytes: 0 when the free memory is one range (or there is
     * none), near 1 when it is scattered in many small ranges that no large request can use.
     */
    double fragmentation() {
        long free = freeBytes();
        return free == 0 ? 0.0 : 1.0 - (double) largestFreeBytes() / free;
    }

    /**
     * Checks that live, free and held ranges tile every segment exactly (no overlap, no gap), that no
     * two free ranges touch (they would have been coalesced), that every range is aligned, and that
     * the byte counts agree. Throws IllegalStateException naming the first violation. For tests.
     */
    void checkInvariants() {
        List<List<PoolBlock>> bySegment = new ArrayList<>();
        for (int s = 0; s < segmentSizes.size(); s++) {
            bySegment.add(new ArrayList<>());
        }
        long liveSum = 0;
        for (PoolBlock b : live) {
            bySegment.get(b.segment()).add(b);
            liveSum += b.size();
        }
        long heldSum = 0;
        for (Held h : held) {
            bySegment.get(h.block().segment()).add(h.block());
            heldSum += h.block().size();
        }
        Set<PoolBlock> free = new HashSet<>();
        for (int s = 0; s < segmentSizes.size(); s++) {
            for (PoolBlock f : freeByOffset.get(s).values()) {
                bySegment.get(s).add(f);
                free.add(f);
            }
        }
        if (!free.equals(new HashSet<>(freeBySize))) {
            throw new IllegalStateException("the free ranges by size and by offset differ");
        }
        if (liveSum != allocated || heldSum != heldBytes) {
            throw new IllegalStateException("counted " + allocated + " allocated / " + heldBytes + " held bytes, ranges sum to "
                    + liveSum + " / " + heldSum);
        }
        for (int s = 0; s < segmentSizes.size(); s++) {
            List<PoolBlock> ranges = bySegment.get(s);
            ranges.sort(Comparator.comparingLong(PoolBlock::offset));
            long at = 0;
            boolean previousFree = false;
            for (PoolBlock r : ranges) {
                if (r.offset() != at) {
                    throw new IllegalStateException("segment " + s + ": " + (r.offset() < at ? "overlap" : "gap (lost bytes)")
                            + " at offset " + at + " before " + r);
                }
                if (r.offset() % alignment != 0 || r.size() % alignment != 0 || r.size() <= 0) {
                    throw new IllegalStateException("segment " + s + ": range " + r + " is not aligned to " + alignment);
                }
                boolean isFree = free.contains(r);
                if (isFree && previousFree) {
                    throw new IllegalStateException("segment " + s + ": free ranges touch at offset " + r.offset()
                            + " (not coalesced)");
                }
                previousFree = isFree;
                at = r.end();
            }
            if (at != segmentSizes.get(s)) {
                throw new IllegalStateException("segment " + s + ": ranges end at " + at + " of " + segmentSizes.get(s));
            }
        }
    }
}
