package io.symmem.nativ;

import java.nio.ByteBuffer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * Local (not symmetric) memory of a backend's device, zero-filled: GPU memory on cuda (cudaMalloc),
 * aligned host memory on host. It is where out-of-place collectives put their results; Java reads
 * and writes it with {@code copyFrom}/{@code copyTo}. Close it (or its backend) to free it.
 */
public final class LocalBuffer implements AutoCloseable, DeviceMemory {
    private final NativeBackend backend;
    private final long size;
    // volatile, so that isClosed() needs no lock: it is asked on every NCCL call on this memory.
    private volatile Pointer pointer;

    LocalBuffer(NativeBackend backend, long bytes) {
        if (bytes <= 0) {
            throw new NativeException.InvalidArgument("local buffer size must be positive, got " + bytes + " bytes");
        }
        this.backend = backend;
        this.size = bytes;
        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            Status.check(SymmemLibrary.symmem_local_alloc(backend.open(), bytes, out), "symmem_local_alloc");
            this.pointer = out.get(0);
        }
    }

    @Override
    public long size() {
        return size;
    }

    /** The backend whose device holds this memory. */
    @Override
    public NativeBackend backend() {
        return backend;
    }

    /** True when this memory is on a GPU (cuda backend). */
    @Override
    public boolean isDevice() {
        return backend.isDevice();
    }

    public void copyFrom(float[] src, long offsetBytes) {
        copyFrom(src, 0, src.length, offsetBytes);
    }

    public void copyFrom(float[] src, int from, int length, long offsetBytes) {
        HostCopies.in(src, from, length, offsetBytes, this::copyIn, "LocalBuffer.copyFrom(float[])");
    }

    public void copyTo(float[] dst, long offsetBytes) {
        copyTo(dst, 0, dst.length, offsetBytes);
    }

    public void copyTo(float[] dst, int from, int length, long offsetBytes) {
        HostCopies.out(dst, from, length, offsetBytes, this::copyOut, "LocalBuffer.copyTo(float[])");
    }

    /** bf16/fp16 elements as their raw 16 bits. */
    public void copyFrom(short[] src, long offsetBytes) {
        HostCopies.in(src, 0, src.length, offsetBytes, this::copyIn, "LocalBuffer.copyFrom(short[])");
    }

    public void copyTo(short[] dst, long offsetBytes) {
        HostCopies.out(dst, 0, dst.length, offsetBytes, this::copyOut, "LocalBuffer.copyTo(short[])");
    }

    /** Copies src's remaining bytes to {@code offsetBytes}; src's position advances. */
    public void copyFrom(ByteBuffer src, long offsetBytes) {
        HostCopies.in(src, offsetBytes, this::copyIn, "LocalBuffer.copyFrom(ByteBuffer)");
    }

    /** Fills dst's remaining bytes from {@code offsetBytes}; dst's position advances. */
    public void copyTo(ByteBuffer dst, long offsetBytes) {
        HostCopies.out(dst, offsetBytes, this::copyOut, "LocalBuffer.copyTo(ByteBuffer)");
    }

    private int copyIn(org.bytedeco.javacpp.BytePointer host, long offset, long bytes) {
        return SymmemLibrary.symmem_local_copy_in(backend.open(), open(), offset, host, bytes);
    }

    private int copyOut(org.bytedeco.javacpp.BytePointer host, long offset, long bytes) {
        return SymmemLibrary.symmem_local_copy_out(backend.open(), open(), offset, host, bytes);
    }

    @Override
    public boolean isClosed() {
        return pointer == null || !backend.isOpen();
    }

    /** The device address of the memory. */
    long address() {
        return open().address();
    }

    Pointer open() {
        if (pointer == null) {
            throw new IllegalStateException("local buffer is freed");
        }
        return pointer;
    }

    @Override
    public synchronized void close() {
        if (pointer != null) {
            if (backend.isOpen()) {
                SymmemLibrary.symmem_local_free(backend.open(), pointer);
            }
            // else: symmem_backend_close already freed it
            pointer = null;
        }
    }
}
