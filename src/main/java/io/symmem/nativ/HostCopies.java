package io.symmem.nativ;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.javacpp.BytePointer;

/**
 * Moves Java data (float[], short[], ByteBuffer) through one native copy call that takes a host
 * pointer, an offset and a byte count. Direct buffers go straight through; arrays and heap buffers
 * are staged in native memory in chunks, so any size works without pinning the Java heap.
 */
final class HostCopies {
    static {
        SymmemLibrary.ensureLoaded();
    }

    /** Staging chunk for arrays and heap buffers. */
    static final int STAGE_BYTES = 8 << 20;

    /** One native copy: host pointer (position 0 or a byte position), device-side offset, bytes. */
    @FunctionalInterface
    interface RawCopy {
        int copy(BytePointer host, long offset, long bytes);
    }

    private HostCopies() {
    }

    static void checkRange(String what, int arrayLength, int from, int length) {
        if (from < 0 || length < 0 || from > arrayLength - length) {
            throw new NativeException.InvalidArgument(what + ": array range [" + from + ", " + ((long) from + length)
                    + ") is outside the array of " + arrayLength + " elements");
        }
    }

    static void checkOffset(String what, long offset) {
        if (offset < 0) {
            throw new NativeException.InvalidArgument(what + ": offset " + offset + " must be >= 0");
        }
    }

    static void in(float[] src, int from, int length, long offset, RawCopy copy, String call) {
        checkRange(call, src.length, from, length);
        stagedIn((long) length * Float.BYTES, offset, copy, call,
                (stage, done, bytes) -> stage.asFloatBuffer().put(src, from + (int) (done / Float.BYTES), (int) (bytes / Float.BYTES)));
    }

    static void out(float[] dst, int from, int length, long offset, RawCopy copy, String call) {
        checkRange(call, dst.length, from, length);
        stagedOut((long) length * Float.BYTES, offset, copy, call,
                (stage, done, bytes) -> stage.asFloatBuffer().get(dst, from + (int) (done / Float.BYTES), (int) (bytes / Float.BYTES)));
    }

    static void in(short[] src, int from, int length, long offset, RawCopy copy, String call) {
        checkRange(call, src.length, from, length);
        stagedIn((long) length * Short.BYTES, offset, copy, call,
                (stage, done, bytes) -> stage.asShortBuffer().put(src, from + (int) (done / Short.BYTES), (int) (bytes / Short.BYTES)));
    }

    static void out(short[] dst, int from, int length, long offset, RawCopy copy, String call) {
        checkRange(call, dst.length, from, length);
        stagedOut((long) length * Short.BYTES, offset, copy, call,
                (stage, done, bytes) -> stage.asShortBuffer().get(dst, from + (int) (done / Short.BYTES), (int) (bytes / Short.BYTES)));
    }

    /** Copies src's remaining bytes in and advances its position. */
    static void in(ByteBuffer src, long offset, RawCopy copy, String call) {
        int n = src.remaining();
        if (src.isDirect()) {
            try (BytePointer p = new BytePointer(src)) {
                Status.check(copy.copy(p, offset, n), call);
            }
        } else {
            ByteBuffer view = src.duplicate();
            stagedIn(n, offset, copy, call, (stage, done, bytes) -> {
                view.limit(view.position() + (int) bytes);
                stage.put(view);
                view.limit(src.limit());
            });
        }
        src.position(src.position() + n);
    }

    /** Fills dst's remaining bytes and advances its position. */
    static void out(ByteBuffer dst, long offset, RawCopy copy, String call) {
        if (dst.isReadOnly()) {
            throw new NativeException.InvalidArgument(call + ": dst is a read-only ByteBuffer");
        }
        int n = dst.remaining();
        if (dst.isDirect()) {
            try (BytePointer p = new BytePointer(dst)) {
                Status.check(copy.copy(p, offset, n), call);
            }
        } else {
            ByteBuffer view = dst.duplicate();
            stagedOut(n, offset, copy, call, (stage, done, bytes) -> view.put(stage.limit((int) bytes)));
        }
        dst.position(dst.position() + n);
    }

    @FunctionalInterface
    private interface Chunk {
        void apply(ByteBuffer stage, long done, long bytes);
    }

    private static void stagedIn(long total, long offset, RawCopy copy, String call, Chunk fill) {
        checkOffset(call, offset);
        if (total == 0) {
            Status.check(copy.copy(null, offset, 0), call);
            return;
        }
        try (BytePointer stage = new BytePointer(Math.min(total, STAGE_BYTES))) {
            ByteBuffer bytes = stage.asByteBuffer().order(ByteOrder.nativeOrder());
            for (long done = 0; done < total; ) {
                long n = Math.min(total - done, STAGE_BYTES);
                bytes.clear();
                fill.apply(bytes, done, n);
                Status.check(copy.copy(stage, offset + done, n), call);
                done += n;
            }
        }
    }

    private static void stagedOut(long total, long offset, RawCopy copy, String call, Chunk drain) {
        checkOffset(call, offset);
        if (total == 0) {
            Status.check(copy.copy(null, offset, 0), call);
            return;
        }
        try (BytePointer stage = new BytePointer(Math.min(total, STAGE_BYTES))) {
            ByteBuffer bytes = stage.asByteBuffer().order(ByteOrder.nativeOrder());
            for (long done = 0; done < total; ) {
                long n = Math.min(total - done, STAGE_BYTES);
                Status.check(copy.copy(stage, offset + done, n), call);
                bytes.clear();
                drain.apply(bytes, done, n);
                done += n;
            }
        }
    }
}
