package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * Broadcast: the root's first {@code count} elements reach every rank, into {@code out} (count elements of
 * local memory, the root's too) or, with {@code out == null}, in place over each rank's first count
 * elements. The root's buffer is only read.
 */
public final class Broadcast {
    private Broadcast() {
    }

    public static void run(SymmetricMemory memory, DType dtype, long count, int root, LocalBuffer out, NativeStream stream,
            Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.checkTimeout(timeout);
        Collectives.checkRoot("broadcast", memory, root);
        Collectives.checkCount("broadcast", memory, dtype, count, 1);
        Collectives.checkOut("broadcast", memory, out, count * dtype.bytes(), dtype, count);
        memory.nativeBuffer().broadcast(dtype.code(), count, root, out, stream, timeout);
    }
}
