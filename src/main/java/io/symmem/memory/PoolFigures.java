package io.symmem.memory;

/**
 * A pool's figures at one moment, per rank. reserved: bytes of all segments; allocated: bytes of live
 * blocks (rounded to the alignment), requested: what their callers asked for; held: freed blocks
 * waiting for a stream; peak: the most ever allocated at once; fragmentation: 1 - largest free range /
 * free bytes (0 = all free memory in one range).
 */
public record PoolFigures(String group, String backend, long reservedBytes, long allocatedBytes, long requestedBytes,
        long heldBytes, long peakAllocatedBytes, long freeBytes, long largestFreeBytes, int segments, int liveBlocks,
        double fragmentation, long allocations, long frees, long segmentSizeBytes, long alignment, boolean noSplit) {

    /** One line for messages. */
    public String summary() {
        return String.format("pool of group '%s' (%s): %d segment(s), reserved %d bytes, allocated %d in %d block(s) "
                + "(requested %d), held for streams %d, free %d (largest range %d, fragmentation %.3f), peak %d; "
                + "segment %d bytes, alignment %d%s", group, backend, segments, reservedBytes, allocatedBytes, liveBlocks,
                requestedBytes, heldBytes, freeBytes, largestFreeBytes, fragmentation, peakAllocatedBytes,
                segmentSizeBytes, alignment, noSplit ? ", no_split" : "");
    }
}
