package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * All-reduce over a symmetric buffer. The slice has one algorithm, one-shot: every rank reads every
 * peer's input straight from the mapped buffers and reduces locally, which is the fastest choice for
 * small and medium sizes. Two-shot and the size-based choice come with the CUDA backend.
 */
public final class AllReduce {
    /** Signal-pad channel reserved for the barriers inside all-reduce; user barriers use others. */
    public static final int CHANNEL = 0;

    private AllReduce() {
    }

    /**
     * Sums {@code count} float32 values at offset 0 of every rank's buffer into {@code out} (a
     * direct buffer of at least {@code count * 4} bytes, outside the symmetric buffer). Collective.
     */
    public static void sumFloat32(SymmetricMemory memory, long count, ByteBuffer out, Duration timeout) {
        if (count < 0 || count * Float.BYTES > memory.sizeBytes()) {
            throw new IllegalArgumentException("all-reduce of " + count + " float32 elements needs " + count * Float.BYTES
                    + " bytes, but the symmetric buffer of group '" + memory.group() + "' holds " + memory.sizeBytes());
        }
        memory.nativeBuffer().allReduceSumFloat32(count, out, CHANNEL, timeout);
    }

    public static void sumFloat32(SymmetricMemory memory, long count, ByteBuffer out) {
        sumFloat32(memory, count, out, memory.defaultTimeout());
    }
}
