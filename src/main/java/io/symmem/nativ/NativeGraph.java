package io.symmem.nativ;

/**
 * A CUDA graph of symmem calls: captured once on a stream, replayed many times (cuda, nvshmem and
 * nccl backends). Every replay runs the captured calls again, with the arguments they had at capture,
 * on whatever the buffers hold at that moment; the buffers' barrier epochs live in device memory, so
 * replays and ordinary calls may be mixed on a buffer as long as every rank issues the same sequence.
 * The host backend has no graphs ({@link NativeException.Unsupported}).
 *
 * <pre>{@code
 * try (NativeGraph g = NativeGraph.capture(backend, stream, () ->
 *         AllReduce.run(memory, Algorithm.ONE_SHOT, DType.BFLOAT16, ReduceOp.SUM, count, out, stream, timeout))) {
 *     for (...) { memory.copyFrom(input, 0); g.replay(stream); g.synchronize(stream); out.copyTo(result, 0); }
 * }
 * }</pre>
 *
 * While a graph lives, freeing a buffer it uses is refused. See symmem.h ("CUDA graphs") for what a
 * capture refuses.
 */
public final class NativeGraph implements AutoCloseable {
    private SymmemLibrary.GraphHandle handle;

    private NativeGraph(SymmemLibrary.GraphHandle handle) {
        this.handle = handle;
    }

    /**
     * Captures what {@code body} issues on {@code stream} (a stream of {@code backend}'s device, not the
     * default one) from this thread. The calls are recorded, not run: {@code body} must not wait for
     * the stream or copy through it. If {@code body} throws, the capture is ended and discarded.
     */
    public static NativeGraph capture(NativeBackend backend, NativeStream stream, Runnable body) {
        if (stream == null) {
            throw new NativeException.InvalidArgument("a graph is captured on a stream of its own, not the default stream (null)");
        }
        if (stream.isDefault()) {
            throw new NativeException.Unsupported("the " + backend.name()
                    + " backend has no CUDA graphs (its calls run synchronously on the CPU: there is nothing to capture)");
        }
        Status.check(SymmemLibrary.symmem_graph_capture_begin(backend.open(), NativeStream.pointer(stream)),
                "symmem_graph_capture_begin");
        SymmemLibrary.GraphHandle out = new SymmemLibrary.GraphHandle();
        try {
            body.run();
        } catch (RuntimeException | Error e) {
            SymmemLibrary.symmem_graph_capture_end(backend.open(), NativeStream.pointer(stream), out);
            SymmemLibrary.symmem_graph_free(out);
            throw e;
        }
        Status.check(SymmemLibrary.symmem_graph_capture_end(backend.open(), NativeStream.pointer(stream), out),
                "symmem_graph_capture_end");
        return new NativeGraph(out);
    }

    /** Enqueues one replay on {@code stream} and returns. */
    public void replay(NativeStream stream) {
        Status.check(SymmemLibrary.symmem_graph_replay(open(), NativeStream.pointer(stream)), "symmem_graph_replay");
    }

    /**
     * Waits for {@code stream}, then reports a device-side timeout or abort recorded for any buffer of
     * the graph ({@link NativeException.Timeout} naming the call and the peer).
     */
    public void synchronize(NativeStream stream) {
        Status.check(SymmemLibrary.symmem_graph_synchronize(open(), NativeStream.pointer(stream)),
                "symmem_graph_synchronize");
    }

    /** How many symmetric buffers (segments) the graph's calls use. */
    public int bufferCount() {
        return SymmemLibrary.symmem_graph_buffer_count(open());
    }

    /** Nodes of the graph (kernels and whatever else was captured). */
    public long nodeCount() {
        return SymmemLibrary.symmem_graph_node_count(open());
    }

    private synchronized SymmemLibrary.GraphHandle open() {
        if (handle == null) {
            throw new IllegalStateException("the graph is closed");
        }
        return handle;
    }

    /** Frees the graph (a replay still running completes). */
    @Override
    public synchronized void close() {
        if (handle != null) {
            SymmemLibrary.symmem_graph_free(handle);
            handle = null;
        }
    }
}
