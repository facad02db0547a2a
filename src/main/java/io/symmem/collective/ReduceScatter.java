package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * Reduce-scatter: every rank's buffer holds world * count elements; rank r gets the reduction of
 * block r ([r*count, (r+1)*count)) over all ranks, in {@code out} (count elements of local memory)
 * or, with {@code out == null}, in place at block r of its own buffer.
 */
public final class ReduceScatter {
    private ReduceScatter() {
    }

    public static void run(SymmetricMemory memory, DType dtype, ReduceOp op, long count, LocalBuffer out,
            NativeStream stream, Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.require(op, "op");
        Collectives.checkTimeout(timeout);
        Collectives.checkCount("reduce-scatter", memory, dtype, count, memory.worldSize());
        Collectives.checkOut("reduce-scatter", memory, out, count * dtype.bytes(), dtype, count);
        memory.nativeBuffer().reduceScatter(dtype.code(), op.code(), count, out, stream, timeout);
    }
}
