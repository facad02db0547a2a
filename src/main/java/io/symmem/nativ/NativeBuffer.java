package io.symmem.nativ;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Pointer;

/**
 * One rank's symmetric buffer in libsymmem: local memory plus a signal pad, and after
 * {@link #importPeers} every peer's buffer mapped into this process. On the cuda backend the memory
 * is on the GPU: it has no host view, data moves with {@code copyIn}/{@code copyOut}.
 */
public final class NativeBuffer implements DeviceMemory, AutoCloseable {
    /** The own rank, before and after import (SYMMEM_RANK_SELF). */
    public static final int SELF = SymmemLibrary.SYMMEM_RANK_SELF;
    // volatile, so that isClosed() needs no lock: it is asked on every NCCL call on this memory.
    private volatile SymmemLibrary.BufferHandle handle = new SymmemLibrary.BufferHandle();
    private final NativeBackend backend;
    private final long size;
    private volatile long dataAddress;  // 0 until dataAddress() first asks

    NativeBuffer(NativeBackend backend, long sizeBytes) {
        this.backend = backend;
        Status.check(SymmemLibrary.symmem_buffer_alloc(backend.open(), sizeBytes, handle), "symmem_buffer_alloc");
        this.size = sizeBytes;
    }

    private NativeBuffer(NativeBackend backend, SymmemLibrary.BufferHandle viewHandle, long sizeBytes) {
        this.backend = backend;
        this.handle = viewHandle;
        this.size = sizeBytes;
    }

    /**
     * A slice {@code [offsetBytes, offsetBytes + sizeBytes)} of this imported buffer: every call on
     * it acts as on a buffer of that size whose data starts at the offset of every rank's mapping, and
     * it shares this buffer's signal pad (symmem.h, symmem_buffer_view). No rendezvous. Close the
     * slice before this buffer: closing a buffer with open slices is refused.
     */
    public NativeBuffer slice(long offsetBytes, long sizeBytes) {
        SymmemLibrary.BufferHandle out = new SymmemLibrary.BufferHandle();
        Status.check(SymmemLibrary.symmem_buffer_view(open(), offsetBytes, sizeBytes, out), "symmem_buffer_view");
        return new NativeBuffer(backend, out, sizeBytes);
    }

    /** The alignment every slice offset must have (the collectives' vector width). */
    public static long sliceAlignment() {
        return SymmemLibrary.SYMMEM_VIEW_ALIGNMENT;
    }

    /** How many slices of this buffer are open. */
    public int liveSlices() {
        return SymmemLibrary.symmem_buffer_live_views(open());
    }


    @Override
    public long size() {
        return size;
    }

    @Override
    public NativeBackend backend() {
        return backend;
    }

    /** True when the memory is on a GPU (cuda, nccl and nvshmem backends). */
    @Override
    public boolean isDevice() {
        return backend.isDevice();
    }

    @Override
    public boolean isClosed() {
        return handle == null || !backend.isOpen();
    }

    /**
     * This rank's data (after the signal pad), as NCCL's collectives take it. Asked once: the own data never moves
     * while the buffer lives, and an NCCL call on a window should cost no JNI crossing or allocation of its own.
     */
    long dataAddress() {
        SymmemLibrary.BufferHandle h = open();
        long cached = dataAddress;
        if (cached != 0) {
            return cached;
        }
        Pointer p = SymmemLibrary.symmem_buffer_ptr(h, SELF);
        if (p == null || p.isNull()) {
            throw new IllegalStateException("symmem_buffer_ptr: " + SymmemLibrary.symmem_last_error().getString());
        }
        dataAddress = p.address();
        return dataAddress;
    }

    SymmemLibrary.BufferHandle handle() {
        return open();
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

    /** Binds an nvshmem buffer to its group: {@code pes[r]} is group rank r's NVSHMEM PE. */
    public void importPes(int rank, int[] pes) {
        Status.check(SymmemLibrary.symmem_buffer_import_pes(open(), rank, pes.length, pes), "symmem_buffer_import_pes");
    }

    public int rank() {
        return SymmemLibrary.symmem_buffer_rank(open());
    }

    public int world() {
        return SymmemLibrary.symmem_buffer_world(open());
    }

    /**
     * Rank r's buffer as a direct, native-order view (peers' only after import). Host backend only:
     * device memory has no host view.
     */
    public ByteBuffer view(int r) {
        if (isDevice()) {
            throw new NativeException.Unsupported("the symmetric buffer is in GPU memory (cuda device "
                    + backend.device() + "): device memory has no host view; use copyFrom/copyTo");
        }
        Pointer p = SymmemLibrary.symmem_buffer_ptr(open(), r);
        if (p == null || p.isNull()) {
            throw new NativeException.InvalidArgument("no mapping of rank " + r + "'s buffer (world " + safeWorld()
                    + "; peers are mapped by import)");
        }
        return p.capacity(size).asByteBuffer().order(ByteOrder.nativeOrder());
    }

    // ---- host <-> buffer copies (rank r: SELF or, after import, any rank) ----------------------

    public void copyIn(int r, long offsetBytes, float[] src, int from, int length) {
        HostCopies.in(src, from, length, offsetBytes, (p, o, n) -> rawIn(r, o, p, n), "copyFrom(float[])");
    }

    public void copyOut(int r, long offsetBytes, float[] dst, int from, int length) {
        HostCopies.out(dst, from, length, offsetBytes, (p, o, n) -> rawOut(r, o, p, n), "copyTo(float[])");
    }

    public void copyIn(int r, long offsetBytes, short[] src, int from, int length) {
        HostCopies.in(src, from, length, offsetBytes, (p, o, n) -> rawIn(r, o, p, n), "copyFrom(short[])");
    }

    public void copyOut(int r, long offsetBytes, short[] dst, int from, int length) {
        HostCopies.out(dst, from, length, offsetBytes, (p, o, n) -> rawOut(r, o, p, n), "copyTo(short[])");
    }

    /** Copies src's remaining bytes; its position advances. */
    public void copyIn(int r, long offsetBytes, ByteBuffer src) {
        HostCopies.in(src, offsetBytes, (p, o, n) -> rawIn(r, o, p, n), "copyFrom(ByteBuffer)");
    }

    /** Fills dst's remaining bytes; its position advances. */
    public void copyOut(int r, long offsetBytes, ByteBuffer dst) {
        HostCopies.out(dst, offsetBytes, (p, o, n) -> rawOut(r, o, p, n), "copyTo(ByteBuffer)");
    }

    private int rawIn(int r, long offset, BytePointer host, long bytes) {
        return SymmemLibrary.symmem_buffer_copy_in(open(), r, offset, host, bytes);
    }

    private int rawOut(int r, long offset, BytePointer host, long bytes) {
        return SymmemLibrary.symmem_buffer_copy_out(open(), r, offset, host, bytes);
    }

    // ---- synchronisation ---------------------------------------------------------------------

    public void putSignal(int peer, int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_put_signal(open(), peer, channel, Status.millis(timeout)), "symmem_put_signal");
    }

    public void waitSignal(int peer, int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_wait_signal(open(), peer, channel, Status.millis(timeout)), "symmem_wait_signal");
    }

    public void barrier(int channel, Duration timeout) {
        Status.check(SymmemLibrary.symmem_barrier(open(), channel, Status.millis(timeout)), "symmem_barrier");
    }

    public void putSignal(int peer, int channel, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_put_signal_on_stream(open(), peer, channel, NativeStream.pointer(stream),
                Status.millis(timeout)), "symmem_put_signal_on_stream");
    }

    public void waitSignal(int peer, int channel, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_wait_signal_on_stream(open(), peer, channel, NativeStream.pointer(stream),
                Status.millis(timeout)), "symmem_wait_signal_on_stream");
    }

    public void barrier(int channel, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_barrier_on_stream(open(), channel, NativeStream.pointer(stream),
                Status.millis(timeout)), "symmem_barrier_on_stream");
    }

    /** Value signal (symmem.h): op on {@code peer}'s value [channel][own rank]; stream null: synchronous. */
    public void signalValue(int peer, int channel, long value, int op, NativeStream stream) {
        if (stream == null) {
            Status.check(SymmemLibrary.symmem_signal_value(open(), peer, channel, value, op), "symmem_signal_value");
        } else {
            Status.check(SymmemLibrary.symmem_signal_value_on_stream(open(), peer, channel, value, op,
                    NativeStream.pointer(stream)), "symmem_signal_value_on_stream");
        }
    }

    /** Waits until the own value [channel][peer] compares to {@code value}; stream null: synchronous. */
    public void waitSignalValue(int peer, int channel, int cmp, long value, NativeStream stream, Duration timeout) {
        if (stream == null) {
            Status.check(SymmemLibrary.symmem_wait_signal_value(open(), peer, channel, cmp, value,
                    Status.millis(timeout)), "symmem_wait_signal_value");
        } else {
            Status.check(SymmemLibrary.symmem_wait_signal_value_on_stream(open(), peer, channel, cmp, value,
                    NativeStream.pointer(stream), Status.millis(timeout)), "symmem_wait_signal_value_on_stream");
        }
    }

    /** Fills {@code count} uint32 words at {@code offsetBytes} of rank r's data with {@code value}. */
    public void memset32(int r, long offsetBytes, int value, long count, NativeStream stream) {
        Status.check(SymmemLibrary.symmem_memset32(open(), r, offsetBytes, value, count, NativeStream.pointer(stream)),
                "symmem_memset32");
    }

    /** One 32-bit write at {@code offsetBytes} of rank r's data, ordered on the stream. */
    public void writeValue32(int r, long offsetBytes, int value, NativeStream stream) {
        Status.check(SymmemLibrary.symmem_stream_write_value32(open(), r, offsetBytes, value,
                NativeStream.pointer(stream)), "symmem_stream_write_value32");
    }

    /** Waits for the stream (null = default), then reports a device-side timeout of this buffer. */
    public void synchronize(NativeStream stream) {
        Status.check(SymmemLibrary.symmem_stream_synchronize(open(), NativeStream.pointer(stream)),
                "symmem_stream_synchronize");
    }

    /** Reports (and clears) a device-side error of completed work, without waiting. */
    public void check() {
        Status.check(SymmemLibrary.symmem_cuda_check(open()), "symmem_cuda_check");
    }

    // ---- collectives (dtype/op/algo: the symmem.h enum values) --------------------------------

    public void allReduce(int algo, int dtype, int op, long count, LocalBuffer out, NativeStream stream,
            Duration timeout) {
        Status.check(SymmemLibrary.symmem_all_reduce(open(), algo, dtype, op, count, outPointer(out),
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_all_reduce");
    }

    public void allGather(int dtype, long count, LocalBuffer out, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_all_gather(open(), dtype, count, outPointer(out),
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_all_gather");
    }

    public void reduceScatter(int dtype, int op, long count, LocalBuffer out, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_reduce_scatter(open(), dtype, op, count, outPointer(out),
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_reduce_scatter");
    }

    public void broadcast(int dtype, long count, int root, LocalBuffer out, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_broadcast(open(), dtype, count, root, outPointer(out),
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_broadcast");
    }

    public void allToAll(int dtype, long count, LocalBuffer out, NativeStream stream, Duration timeout) {
        Status.check(SymmemLibrary.symmem_all_to_all(open(), dtype, count, outPointer(out),
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_all_to_all");
    }

    /**
     * All-to-all-v (symmem.h): the splits are world + 1 int64 slots at {@code splitsOffset} of this buffer;
     * {@code outSplits} (local memory of 2 * world int64, required) receives the counts received and their
     * offsets.
     */
    public void allToAllV(int dtype, long splitsOffset, LocalBuffer out, long outCapacity, LocalBuffer outSplits,
            NativeStream stream, Duration timeout) {
        if (outSplits == null) {
            throw new NativeException.InvalidArgument("allToAllV: outSplits is null; it receives 2 x world int64");
        }
        Status.check(SymmemLibrary.symmem_all_to_all_v(open(), dtype, splitsOffset, outPointer(out), outCapacity,
                outPointer(outSplits), NativeStream.pointer(stream), Status.millis(timeout)), "symmem_all_to_all_v");
    }

    /** In place, with the counts returned into this rank's buffer at {@code countsOffset} (after the slots). */
    public void allToAllVCountsInBuffer(int dtype, long splitsOffset, long countsOffset, NativeStream stream,
            Duration timeout) {
        // Borrows the buffer's own address (no deallocator of its own): nothing to close.
        BytePointer counts = new BytePointer(SymmemLibrary.symmem_buffer_ptr(open(), SELF)).position(countsOffset);
        Status.check(SymmemLibrary.symmem_all_to_all_v(open(), dtype, splitsOffset, null, 0, counts,
                NativeStream.pointer(stream), Status.millis(timeout)), "symmem_all_to_all_v");
    }

    /**
     * One-sided put on a stream: {@code bytes} of {@code src} from {@code srcOffset} into rank {@code r}'s
     * buffer at {@code offsetBytes} (symmem.h: symmem_put_on_stream).
     */
    public void putOnStream(int r, long offsetBytes, LocalBuffer src, long srcOffset, long bytes, NativeStream stream) {
        Status.check(SymmemLibrary.symmem_put_on_stream(open(), r, offsetBytes, localAt(src, srcOffset, bytes, "src"), bytes,
                NativeStream.pointer(stream)), "symmem_put_on_stream");
    }

    /** One-sided get on a stream: rank {@code r}'s buffer at {@code offsetBytes} into {@code dst} at {@code dstOffset}. */
    public void getOnStream(int r, long offsetBytes, LocalBuffer dst, long dstOffset, long bytes, NativeStream stream) {
        Status.check(SymmemLibrary.symmem_get_on_stream(open(), r, offsetBytes, localAt(dst, dstOffset, bytes, "dst"), bytes,
                NativeStream.pointer(stream)), "symmem_get_on_stream");
    }

    // A local buffer of this backend at an offset, [offset, offset + bytes) inside it.
    private Pointer localAt(LocalBuffer local, long offset, long bytes, String what) {
        if (local == null) {
            throw new NativeException.InvalidArgument(what + " is null");
        }
        if (offset < 0 || bytes < 0 || offset > local.size() || bytes > local.size() - offset) {
            throw new NativeException.InvalidArgument(what + ": offset " + offset + " + bytes " + bytes
                    + " exceed the local buffer's " + local.size() + " bytes");
        }
        return new BytePointer(outPointer(local)).position(offset);
    }

    /** The concrete algorithm (1 one-shot, 2 two-shot, 3 two-shot-ce) AUTO picks for this all-reduce here. */
    public int autoAlgorithm(int dtype, long count, boolean inPlace) {
        try (IntPointer out = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_all_reduce_auto_algo(open(), dtype, count, inPlace ? 1 : 0, out),
                    "symmem_all_reduce_auto_algo");
            return out.get();
        }
    }

    /** Largest input ONE_SHOT reduces in place on this buffer (0 = never). */
    public long oneShotInPlaceMaxBytes() {
        return SymmemLibrary.symmem_one_shot_in_place_max_bytes(open());
    }

    /** Rank r's GPU UUID (16 bytes); Unsupported on the host backend. */
    public byte[] deviceUuid(int r) {
        try (BytePointer out = new BytePointer(16)) {
            Status.check(SymmemLibrary.symmem_buffer_device_uuid(open(), r, out), "symmem_buffer_device_uuid");
            byte[] uuid = new byte[16];
            out.get(uuid);
            return uuid;
        }
    }

    public static long dtypeSize(int dtype) {
        return SymmemLibrary.symmem_dtype_size(dtype);
    }

    private Pointer outPointer(LocalBuffer out) {
        if (out == null) {
            return null;
        }
        if (out.backend() != backend) {
            throw new NativeException.InvalidArgument("out is a local buffer of another backend ("
                    + out.backend().name() + "); allocate it from this buffer's backend");
        }
        return out.open();
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

    /**
     * Frees the buffer. Refused (the buffer stays whole) while slices of it are open, or while an NCCL
     * window is registered on it (NCCL still maps that memory: deregister the window first).
     */
    @Override
    public synchronized void close() {
        if (handle != null) {
            Status.check(SymmemLibrary.symmem_buffer_free(handle), "symmem_buffer_free");
            handle = null;
        }
    }
}
