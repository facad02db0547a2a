package io.symmem.memory;

import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeGraph;
import io.symmem.nativ.NativeStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;

/**
 * A symmetric buffer after rendezvous: this rank's memory, every peer's memory mapped into this
 * process, and a signal pad per rank. Same size on every rank of {@link #group()}.
 * Close it on every rank (free unmaps the peers and releases the local memory).
 * <p>
 * Data moves in and out with {@code copyFrom}/{@code copyTo} on both backends (host arrays, direct
 * or heap buffers; offsets in bytes). The {@link #local()}/{@link #peer(int)} views exist on the host
 * backend only: GPU memory has no host view.
 */
public final class SymmetricMemory implements AutoCloseable {
    private final NativeBuffer buffer;
    private final String group;
    private final int rank;
    private final int worldSize;
    private final Duration defaultTimeout;
    private final Runnable release;
    private boolean closed;

    SymmetricMemory(NativeBuffer buffer, String group, int rank, int worldSize, Duration defaultTimeout) {
        this(buffer, group, rank, worldSize, defaultTimeout, buffer::close);
    }

    /** {@code release} frees the buffer: on nvshmem after the ranks agree, since freeing is collective there. */
    SymmetricMemory(NativeBuffer buffer, String group, int rank, int worldSize, Duration defaultTimeout,
            Runnable release) {
        this.buffer = buffer;
        this.group = group;
        this.rank = rank;
        this.worldSize = worldSize;
        this.defaultTimeout = defaultTimeout;
        this.release = release;
    }

    public String group() {
        return group;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return worldSize;
    }

    public long sizeBytes() {
        return buffer.size();
    }

    /** True when the buffer is in GPU memory (cuda and nvshmem backends). */
    public boolean isDevice() {
        return buffer.isDevice();
    }

    /** This rank's buffer, native byte order. Host backend only (cuda: use copyFrom/copyTo). */
    public ByteBuffer local() {
        return buffer.view(rank);
    }

    /** Rank {@code peer}'s buffer as mapped here: loads and stores reach that rank's memory. */
    public ByteBuffer peer(int peer) {
        checkRank("peer", peer);
        return buffer.view(peer);
    }

    // ---- host <-> buffer copies (this rank's buffer; offsets in bytes) ------------------------

    public void copyFrom(float[] src, long offsetBytes) {
        copyFrom(src, 0, src.length, offsetBytes);
    }

    public void copyFrom(float[] src, int from, int length, long offsetBytes) {
        buffer.copyIn(NativeBuffer.SELF, offsetBytes, src, from, length);
    }

    public void copyTo(float[] dst, long offsetBytes) {
        copyTo(dst, 0, dst.length, offsetBytes);
    }

    public void copyTo(float[] dst, int from, int length, long offsetBytes) {
        buffer.copyOut(NativeBuffer.SELF, offsetBytes, dst, from, length);
    }

    /** bf16/fp16 elements as raw 16-bit values. */
    public void copyFrom(short[] src, long offsetBytes) {
        buffer.copyIn(NativeBuffer.SELF, offsetBytes, src, 0, src.length);
    }

    public void copyTo(short[] dst, long offsetBytes) {
        buffer.copyOut(NativeBuffer.SELF, offsetBytes, dst, 0, dst.length);
    }

    /** Copies src's remaining bytes to {@code offsetBytes}; src's position advances. */
    public void copyFrom(ByteBuffer src, long offsetBytes) {
        buffer.copyIn(NativeBuffer.SELF, offsetBytes, src);
    }

    /** Fills dst's remaining bytes from {@code offsetBytes}; dst's position advances. */
    public void copyTo(ByteBuffer dst, long offsetBytes) {
        buffer.copyOut(NativeBuffer.SELF, offsetBytes, dst);
    }

    /** Reads rank {@code peer}'s buffer (mapped here) from {@code offsetBytes} into dst's remaining bytes. */
    public void copyFromPeer(int peer, long offsetBytes, ByteBuffer dst) {
        checkRank("peer", peer);
        buffer.copyOut(peer, offsetBytes, dst);
    }

    /** Writes src's remaining bytes into rank {@code peer}'s buffer at {@code offsetBytes} (a one-sided put). */
    public void copyToPeer(int peer, long offsetBytes, ByteBuffer src) {
        checkRank("peer", peer);
        buffer.copyIn(peer, offsetBytes, src);
    }

    /** Writes {@code length} floats of src from {@code from} into rank {@code peer}'s buffer at {@code offsetBytes}. */
    public void copyToPeer(int peer, long offsetBytes, float[] src, int from, int length) {
        checkRank("peer", peer);
        buffer.copyIn(peer, offsetBytes, src, from, length);
    }

    /** Reads {@code length} floats of rank {@code peer}'s buffer at {@code offsetBytes} into dst from {@code from}. */
    public void copyFromPeer(int peer, long offsetBytes, float[] dst, int from, int length) {
        checkRank("peer", peer);
        buffer.copyOut(peer, offsetBytes, dst, from, length);
    }

    /** bf16/fp16 elements as raw 16-bit values, into rank {@code peer}'s buffer. */
    public void copyToPeer(int peer, long offsetBytes, short[] src) {
        checkRank("peer", peer);
        buffer.copyIn(peer, offsetBytes, src, 0, src.length);
    }

    /** bf16/fp16 elements as raw 16-bit values, from rank {@code peer}'s buffer. */
    public void copyFromPeer(int peer, long offsetBytes, short[] dst) {
        checkRank("peer", peer);
        buffer.copyOut(peer, offsetBytes, dst, 0, dst.length);
    }

    /**
     * One-sided put on {@code stream} (null: the default stream): {@code bytes} of {@code src} (local memory
     * of this buffer's device) from {@code srcOffset} into rank {@code peer}'s buffer at {@code offsetBytes},
     * ordered after this buffer's earlier work. Followed by {@link #putSignal(int, int, NativeStream, Duration)}
     * on the same stream, the peer that waited for the signal reads the data.
     */
    public void put(int peer, long offsetBytes, LocalBuffer src, long srcOffset, long bytes, NativeStream stream) {
        checkRank("peer", peer);
        buffer.putOnStream(peer, offsetBytes, src, srcOffset, bytes, stream);
    }

    /** One-sided get on {@code stream}: rank {@code peer}'s buffer at {@code offsetBytes} into {@code dst} at {@code dstOffset}. */
    public void get(int peer, long offsetBytes, LocalBuffer dst, long dstOffset, long bytes, NativeStream stream) {
        checkRank("peer", peer);
        buffer.getOnStream(peer, offsetBytes, dst, dstOffset, bytes, stream);
    }

    /** Local memory of this buffer's device, for out-of-place results; close it when done. */
    public LocalBuffer allocateLocal(long bytes) {
        return buffer.backend().allocateLocal(bytes);
    }

    /** A new stream of this buffer's device (on host: the default stream; calls are synchronous). */
    public NativeStream createStream() {
        return buffer.backend().createStream();
    }

    /** Waits for {@code stream} (null = default) and reports a device-side timeout of this buffer. */
    public void synchronize(NativeStream stream) {
        buffer.synchronize(stream);
    }

    /** Every rank of the group reaches this barrier on {@code channel}, or it fails naming who did not. */
    public void barrier(int channel, Duration timeout) {
        buffer.barrier(channel, timeout);
    }

    public void barrier(int channel) {
        barrier(channel, defaultTimeout);
    }

    /** Signals {@code peer} on {@code channel} (release: our earlier writes are visible to it). */
    public void putSignal(int peer, int channel, Duration timeout) {
        checkRank("peer", peer);
        buffer.putSignal(peer, channel, timeout);
    }

    /** Waits for {@code peer}'s signal on {@code channel} (acquire: its earlier writes are visible). */
    public void waitSignal(int peer, int channel, Duration timeout) {
        checkRank("peer", peer);
        buffer.waitSignal(peer, channel, timeout);
    }

    /** {@link #putSignal(int, int, Duration)} on {@code stream}, after the stream's earlier work (a put). */
    public void putSignal(int peer, int channel, NativeStream stream, Duration timeout) {
        checkRank("peer", peer);
        buffer.putSignal(peer, channel, stream, timeout);
    }

    /** {@link #waitSignal(int, int, Duration)} on {@code stream}: the stream's later work sees the peer's data. */
    public void waitSignal(int peer, int channel, NativeStream stream, Duration timeout) {
        checkRank("peer", peer);
        buffer.waitSignal(peer, channel, stream, timeout);
    }

    /**
     * Value signal: sets or adds {@code value} to this rank's value on {@code peer}'s pad for
     * {@code channel} (0 to 15), with release: what this rank wrote before is visible to the peer once its
     * {@link #waitSignalValue} has seen the value. Never waits. Values start at 0; only this rank writes its
     * value on a peer, and waits leave it as it is.
     */
    public void signalValue(int peer, int channel, SignalOp op, long value) {
        checkRank("peer", peer);
        buffer.signalValue(peer, channel, value, op.code(), null);
    }

    /** {@link #signalValue(int, int, SignalOp, long)} on {@code stream}, after the stream's earlier work (a put). */
    public void signalValue(int peer, int channel, SignalOp op, long value, NativeStream stream) {
        checkRank("peer", peer);
        buffer.signalValue(peer, channel, value, op.code(), Objects.requireNonNull(stream, "stream"));
    }

    /**
     * Waits until {@code peer}'s value for {@code channel} on this rank's pad compares to {@code value}
     * (unsigned), with acquire: what the peer wrote before setting it is visible. Past the timeout it
     * fails naming the peer, the value waited for and the value seen.
     */
    public void waitSignalValue(int peer, int channel, SignalCompare cmp, long value, Duration timeout) {
        checkRank("peer", peer);
        buffer.waitSignalValue(peer, channel, cmp.code(), value, null, timeout);
    }

    /** {@link #waitSignalValue(int, int, SignalCompare, long, Duration)} on {@code stream}. */
    public void waitSignalValue(int peer, int channel, SignalCompare cmp, long value, NativeStream stream,
            Duration timeout) {
        checkRank("peer", peer);
        buffer.waitSignalValue(peer, channel, cmp.code(), value, Objects.requireNonNull(stream, "stream"),
                timeout);
    }

    /**
     * Captures what {@code body} issues on {@code stream} into a CUDA graph to replay (cuda, nvshmem and
     * nccl backends; the host backend has none: {@code NativeException.Unsupported}). See {@link NativeGraph}.
     */
    public NativeGraph captureGraph(NativeStream stream, Runnable body) {
        return NativeGraph.capture(buffer.backend(), stream, body);
    }

    public Duration defaultTimeout() {
        return defaultTimeout;
    }

    /** The native buffer, for the collectives of this library. */
    public NativeBuffer nativeBuffer() {
        return buffer;
    }

    private void checkRank(String what, int r) {
        if (r < 0 || r >= worldSize) {
            throw new IllegalArgumentException(what + " rank " + r + " is outside group '" + group + "' of "
                    + worldSize + " ranks");
        }
    }

    /**
     * Frees this rank's part. On the nvshmem backend this is collective over the whole world, like the
     * allocation (NVSHMEM frees its heap together): every rank closes its buffers in the same order. A
     * refused free (the buffer is still in use) can be retried.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        // Closed only once freed: a free the native layer refuses (a live graph or slice uses the buffer)
        // leaves it as it was, and closing again after that use has ended frees it.
        release.run();
        closed = true;
    }
}
