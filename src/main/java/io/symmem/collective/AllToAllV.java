package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * All-to-all with variable splits (the shuffle, and mixture-of-experts dispatch and combine). Each rank's
 * buffer holds its input elements from byte 0 and, at byte {@code splitsOffset} (a multiple of 8, after the
 * input), world + 1 int64 slots: the caller (or an earlier kernel on the stream) writes slot p, how many
 * elements go to rank p, taken from the input in rank order; the call writes the last slot itself. Rank p
 * receives the parts for it packed in rank order, into {@code out} (local memory of {@code outCapacity}
 * elements) or, with {@code out == null}, in place from byte 0 (capacity: the elements before the splits).
 * {@code outSplits} (local memory of 2 * world int64) receives how many elements came from each rank, then
 * where each rank's part starts in the output. Splits that do not fit fail on every rank, naming the rank,
 * the peer and the sizes, and write nothing.
 */
public final class AllToAllV {
    private AllToAllV() {
    }

    /** Bytes of the splits' slots in a buffer of a group of {@code world} ranks. */
    public static long splitsBytes(int world) {
        return Long.BYTES * (world + 1L);
    }

    /**
     * Where the façade's in-place all-to-all-v keeps the splits in a buffer of {@code bufferBytes}: the last
     * whole int64 slots that hold the splits and the counts returned, or -1 when they do not fit.
     */
    public static long facadeSplitsOffset(long bufferBytes, int world) {
        long offset = (bufferBytes - splitsBytes(world) - countsBytes(world)) / Long.BYTES * Long.BYTES;
        return bufferBytes < splitsBytes(world) + countsBytes(world) ? -1 : offset;
    }

    /** Bytes of the counts an all-to-all-v returns (how many from each rank, then where each part starts). */
    public static long countsBytes(int world) {
        return 2L * Long.BYTES * world;
    }

    /**
     * In place, the counts returned into this rank's buffer at {@code countsOffset} (after the slots:
     * no peer reads there), where a buffer copy reads them.
     */
    public static void runInPlace(SymmetricMemory memory, DType dtype, long splitsOffset, long countsOffset,
            NativeStream stream, Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.checkTimeout(timeout);
        checkSplitsOffset(memory, splitsOffset);
        int world = memory.worldSize();
        if (countsOffset < splitsOffset + splitsBytes(world) || countsOffset % Long.BYTES != 0
                || countsOffset > memory.sizeBytes() - countsBytes(world)) {
            throw new IllegalArgumentException("all-to-all-v: countsOffset " + countsOffset + " must be a multiple of 8 after"
                    + " the splits' slots (from byte " + (splitsOffset + splitsBytes(world)) + ") with " + countsBytes(world)
                    + " bytes inside the symmetric buffer of group '" + memory.group() + "' (" + memory.sizeBytes() + " bytes)");
        }
        memory.nativeBuffer().allToAllVCountsInBuffer(dtype.code(), splitsOffset, countsOffset, stream, timeout);
    }

    private static void checkSplitsOffset(SymmetricMemory memory, long splitsOffset) {
        int world = memory.worldSize();
        if (splitsOffset < 0 || splitsOffset % Long.BYTES != 0
                || splitsOffset > memory.sizeBytes() - splitsBytes(world)) {
            throw new IllegalArgumentException("all-to-all-v: splitsOffset " + splitsOffset + " must be a multiple of 8 with "
                    + splitsBytes(world) + " bytes (world + 1 int64 slots) after it inside the symmetric buffer of group '"
                    + memory.group() + "' (" + memory.sizeBytes() + " bytes)");
        }
    }

    public static void run(SymmetricMemory memory, DType dtype, long splitsOffset, LocalBuffer out, long outCapacity,
            LocalBuffer outSplits, NativeStream stream, Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.require(outSplits, "outSplits");
        Collectives.checkTimeout(timeout);
        int world = memory.worldSize();
        checkSplitsOffset(memory, splitsOffset);
        if (outCapacity < 0) {
            throw new IllegalArgumentException("all-to-all-v: outCapacity must be >= 0, got " + outCapacity);
        }
        if (outSplits.size() < countsBytes(world)) {
            throw new IllegalArgumentException("all-to-all-v: outSplits holds " + outSplits.size() + " bytes, but 2 x world "
                    + world + " int64 need " + countsBytes(world));
        }
        Collectives.checkOut("all-to-all-v", memory, outSplits, 0, dtype, 0);
        if (out != null) {
            Collectives.checkOut("all-to-all-v", memory, out, Math.multiplyExact(outCapacity, dtype.bytes()), dtype,
                    outCapacity);
        }
        memory.nativeBuffer().allToAllV(dtype.code(), splitsOffset, out, out == null ? 0 : outCapacity, outSplits, stream,
                timeout);
    }
}
