package io.symmem.nativ;

import java.time.Duration;
import org.bytedeco.javacpp.IntPointer;

/**
 * A point recorded in a stream that says later whether the stream has run past it (a CUDA event on
 * the device backends; on the host backend, whose calls are synchronous, it is passed at once).
 * Close it before its backend.
 */
public final class NativeStreamMarker implements AutoCloseable {
    private SymmemLibrary.MarkerHandle handle = new SymmemLibrary.MarkerHandle();

    /** Records a marker in {@code stream} (null = the default stream) of {@code backend}. */
    public NativeStreamMarker(NativeBackend backend, NativeStream stream) {
        Status.check(SymmemLibrary.symmem_stream_marker_record(backend.open(), NativeStream.pointer(stream), handle),
                "symmem_stream_marker_record");
    }

    /** True once the stream has passed the marker. Never waits. */
    public boolean passed() {
        try (IntPointer out = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_stream_marker_query(open(), out), "symmem_stream_marker_query");
            return out.get() != 0;
        }
    }

    /** Waits until the stream has passed the marker, or fails at the deadline naming the stream. */
    public void await(Duration timeout) {
        Status.check(SymmemLibrary.symmem_stream_marker_wait(open(), Status.millis(timeout)), "symmem_stream_marker_wait");
    }

    private SymmemLibrary.MarkerHandle open() {
        if (handle == null) {
            throw new IllegalStateException("stream marker is freed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != null) {
            SymmemLibrary.symmem_stream_marker_free(handle);
            handle = null;
        }
    }
}
