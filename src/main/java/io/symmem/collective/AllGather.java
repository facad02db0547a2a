package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * All-gather: rank r contributes {@code count} elements. Out of place ({@code out} = local memory of
 * world * count elements): rank r's contribution is at offset 0 of its buffer, and out receives rank
 * p's at [p*count, (p+1)*count). In place ({@code out == null}): rank r's contribution is already at
 * [r*count, (r+1)*count) of its buffer and every rank's buffer ends up holding all of them.
 */
public final class AllGather {
    private AllGather() {
    }

    public static void run(SymmetricMemory memory, DType dtype, long count, LocalBuffer out, NativeStream stream,
            Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.checkTimeout(timeout);
        int world = memory.worldSize();
        Collectives.checkCount("all-gather", memory, dtype, count, out == null ? world : 1);
        Collectives.checkOut("all-gather", memory, out, count * dtype.bytes() * world, dtype, count);
        memory.nativeBuffer().allGather(dtype.code(), count, out, stream, timeout);
    }
}
