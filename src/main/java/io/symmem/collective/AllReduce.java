package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.time.Duration;

/**
 * All-reduce over a symmetric buffer: every rank has {@code count} elements at offset 0 of its
 * buffer; every rank gets the same reduction (peers are reduced in rank order). Any dtype, op and
 * algorithm, in place ({@code out == null}) or into a {@link LocalBuffer}, enqueued on a stream
 * (cuda) or synchronous (host).
 */
public final class AllReduce {
    private AllReduce() {
    }

    /**
     * All-reduce of {@code count} elements of {@code dtype}. {@code out}: null = in place (the result
     * replaces the input), else local memory of at least {@code count * dtype.bytes()} bytes
     * ({@code memory.allocateLocal}). TWO_SHOT out of place uses the symmetric buffer as scratch (its
     * contents are unspecified afterwards). {@code stream}: null = the default stream; on cuda the
     * call only enqueues, {@code memory.synchronize(stream)} waits and reports device timeouts.
     * Collective: every rank calls it with the same arguments.
     */
    public static void run(SymmetricMemory memory, Algorithm algo, DType dtype, ReduceOp op, long count,
            LocalBuffer out, NativeStream stream, Duration timeout) {
        Collectives.require(memory, "memory");
        Collectives.require(algo, "algo");
        Collectives.require(dtype, "dtype");
        Collectives.require(op, "op");
        Collectives.checkTimeout(timeout);
        Collectives.checkCount("all-reduce", memory, dtype, count, 1);
        Collectives.checkOut("all-reduce", memory, out, count * dtype.bytes(), dtype, count);
        memory.nativeBuffer().allReduce(algo.code(), dtype.code(), op.code(), count, out, stream, timeout);
    }

    /** The concrete algorithm AUTO runs for this all-reduce on this buffer. */
    public static Algorithm autoAlgorithm(SymmetricMemory memory, DType dtype, long count, boolean inPlace) {
        Collectives.require(memory, "memory");
        Collectives.require(dtype, "dtype");
        Collectives.checkCount("all-reduce", memory, dtype, count, 1);
        return Algorithm.ofCode(memory.nativeBuffer().autoAlgorithm(dtype.code(), count, inPlace));
    }
}
