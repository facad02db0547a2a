package io.symmem.nativ;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;

/**
 * One rank's symmetric buffer in libsymmem: local memory plus a signal pad, and after
 * {@link #importPeers} every peer's buffer mapped into this process.
 */
public final class NativeBuffer implements AutoCloseable {
    private SymmemLibrary.BufferHandle handle = new SymmemLibrary.BufferHandle();
    private final long size;

    NativeBuffer(SymmemLibrary.BackendHandle backend, long sizeBytes) {
        Status.check(SymmemLibrary.symmem_buffer_alloc(backend, sizeBytes, handle), "symmem_buffer_alloc");
        this.size = sizeBytes;
    }

    public long size() {
        return size;
    }

    /** The fd sharing this rank's allocation; owned by the buffer. */
    public int exportFd() {
        try (IntPointer out = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_buffer_export_fd(open(), out), "symmem_buffer_export_fd");
            return out.get();
        }
    }

    /** Maps every peer's allocation; {@code fds[r]} is rank r's exported fd (not taken over). */
    public void importPeers(int rank, int[] fds) {
        Status.check(SymmemLibrary.symmem_buffer_import(open(), rank, fds.length, fds), "symmem_buffer_import");
    }

    public int rank() {
        return SymmemLibrary.symmem_buffer_rank(open());
    }

    public int world() {
        return SymmemLibrary.symmem_buffer_world(open());
    }

    /** Rank r's buffer as a direct, native-order view (peers' only after import). */
    public ByteBuffer view(int r) {
        Pointer p = SymmemLibrary.symmem_buffer_ptr(open(), r);
        if (p == null || p.isNull()) {
            throw new NativeException.InvalidArgument("no mapping of rank " + r + "'s buffer (world " + safeWorld()
                    + "; peers are mapped by import)");
        }
        return p.capacity(size).asByteBuffer().order(ByteOrder.nativeOrder());
    }

    public void putSignal(int peer, int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_put_signal(open(), peer, channel, Status.millis(timeout)), "symmem_put_signal");
    }

    public void waitSignal(int peer, int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_wait_signal(open(), peer, channel, Status.millis(timeout)), "symmem_wait_signal");
    }

    public void barrier(int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_barrier(open(), channel, Status.millis(timeout)), "symmem_barrier");
    }

    /**
     * One-shot float32 sum of {@code count} elements at offset 0 of every rank's buffer into
     * {@code out}, a direct buffer outside the symmetric one.
     */
    public void allReduceSumFloat32(long count, ByteBuffer out, int channel, Duration timeout) {
        if (!out.isDirect()) {
            throw new NativeException.InvalidArgument("all-reduce output must be a direct ByteBuffer");
        }
        if (out.capacity() < count * Float.BYTES) {
            throw new NativeException.InvalidArgument("all-reduce output holds " + out.capacity() + " bytes, "
                    + count + " float32 elements need " + count * Float.BYTES);
        }
        Status.check(SymmemLibrary.symmem_all_reduce_one_shot(open(), SymmemLibrary.SYMMEM_FLOAT32,
                SymmemLibrary.SYMMEM_SUM, count, new Pointer(out), channel, Status.millis(timeout)),
                "symmem_all_reduce_one_shot");
    }

    private int safeWorld() {
        return handle == null ? 0 : SymmemLibrary.symmem_buffer_world(handle);
    }

    private SymmemLibrary.BufferHandle open() {
        if (handle == null) {
            throw new IllegalStateException("symmetric buffer is freed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != null) {
            SymmemLibrary.symmem_buffer_free(handle);
            handle = null;
        }
    }
}
