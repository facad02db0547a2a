package io.symmem.nativ;

import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A stream of a backend's device (a non-blocking CUDA stream on cuda). Collectives and the
 * *_on_stream calls enqueue on it and return; {@code SymmetricMemory.synchronize(stream)} waits and
 * reports device-side timeouts. The host backend has no streams (its calls are synchronous): there a
 * stream is the default one. A {@code null} stream argument anywhere means the default stream.
 */
public final class NativeStream implements AutoCloseable {
    private final NativeBackend backend;
    private Pointer handle;
    /** handle's address (0: the default stream), what per-call functions take instead of the Pointer. */
    private final long address;
    private volatile boolean closed;

    NativeStream(NativeBackend backend) {
        this.backend = backend;
        try (PointerPointer<Pointer> out = new PointerPointer<>(1)) {
            Status.check(SymmemLibrary.symmem_stream_create(backend.open(), out), "symmem_stream_create");
            Pointer p = out.get(0);
            this.handle = p == null || p.isNull() ? null : p;
            this.address = handle == null ? 0 : handle.address();
        }
    }

    public NativeBackend backend() {
        return backend;
    }

    /** True for the host backend's stand-in (no real stream: calls run synchronously). */
    public boolean isDefault() {
        return handle == null;
    }

    static Pointer pointer(NativeStream stream) {
        if (stream == null) {
            return null;
        }
        if (stream.closed) {
            throw new IllegalStateException("stream is destroyed");
        }
        return stream.handle;
    }

    /** The stream's address for a per-call function; 0 for null (the default stream). */
    static long address(NativeStream stream) {
        if (stream == null) {
            return 0;
        }
        if (stream.closed) {
            throw new IllegalStateException("stream is destroyed");
        }
        return stream.address;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            if (handle != null && backend.isOpen()) {
                Status.check(SymmemLibrary.symmem_stream_destroy(backend.open(), handle), "symmem_stream_destroy");
            }
            handle = null;
        }
    }
}
