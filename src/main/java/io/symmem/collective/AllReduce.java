package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * All-reduce over a symmetric buffer: every rank has {@code count} elements at offset 0 of its
 * buffer; every rank gets the same reduction (peers are reduced in rank order).
 * <ul>
 * <li>{@link #run}: any dtype/op/algorithm, in place ({@code out == null}) or into a
 * {@link LocalBuffer}, enqueued on a stream (cuda) or synchronous (host).</li>
 * <li>{@link #sumFloat32}: the first slice's call, a one-shot float32 sum into a host ByteBuffer;
 * works on both backends (on cuda through device scratch and a copy back).</li>
 * </ul>
 */
public final class AllReduce {
    /** Signal-pad channel reserved for the barriers inside the host one-shot; user barriers use others. */
    public static final int CHANNEL = 0;

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

    /**
     * Sums {@code count} float32 values at offset 0 of every rank's buffer into {@code out} (a
     * direct buffer of at least {@code count * 4} bytes, outside the symmetric buffer). Collective,
     * synchronous. On cuda the sum goes to device scratch owned by {@code memory}, then to out.
     */
    public static void sumFloat32(SymmetricMemory memory, long count, ByteBuffer out, Duration timeout) {
        if (count < 0 || count * Float.BYTES > memory.sizeBytes()) {
            throw new IllegalArgumentException("all-reduce of " + count + " float32 elements needs " + count * Float.BYTES
                    + " bytes, but the symmetric buffer of group '" + memory.group() + "' holds " + memory.sizeBytes());
        }
        if (!memory.isDevice()) {
            memory.nativeBuffer().allReduceSumFloat32(count, out, CHANNEL, timeout);
            return;
        }
        if (out.capacity() < count * Float.BYTES) {
            throw new IllegalArgumentException("all-reduce output holds " + out.capacity() + " bytes, "
                    + count + " float32 elements need " + count * Float.BYTES);
        }
        if (count == 0) {
            return;
        }
        LocalBuffer scratch = memory.scratch(count * Float.BYTES);
        memory.nativeBuffer().allReduce(Algorithm.ONE_SHOT.code(), DType.FLOAT32.code(), ReduceOp.SUM.code(), count,
                scratch, null, timeout);
        memory.nativeBuffer().synchronize(null);
        ByteBuffer target = out.duplicate();
        target.clear().limit((int) (count * Float.BYTES));
        scratch.copyTo(target, 0);
    }

    public static void sumFloat32(SymmetricMemory memory, long count, ByteBuffer out) {
        sumFloat32(memory, count, out, memory.defaultTimeout());
    }
}
