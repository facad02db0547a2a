package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * All-to-all of equal blocks: every rank's buffer holds world blocks of {@code count} elements, block p for
 * rank p. {@code out} (world * count elements of local memory) receives rank q's block for this rank at
 * [q*count, (q+1)*count); with {@code out == null} the buffer's blocks are replaced the same way.
 */
public final class AllToAll {
    private AllToAll() {
    }

    public static void run(SymmetricMemory memory, DType dtype, long count, LocalBuffer out, NativeStream stream,
            Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.checkTimeout(timeout);
        Collectives.checkCount("all-to-all", memory, dtype, count, memory.worldSize());
        Collectives.checkOut("all-to-all", memory, out, count * dtype.bytes() * memory.worldSize(), dtype, count);
        memory.nativeBuffer().allToAll(dtype.code(), count, out, stream, timeout);
    }
}
