package io.symmem.memory;

import io.symmem.nativ.NativeBuffer;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A symmetric buffer after rendezvous: this rank's memory, every peer's memory mapped into this
 * process, and a signal pad per rank. Same size on every rank of {@link #group()}.
 * Close it on every rank (free unmaps the peers and releases the local memory).
 */
public final class SymmetricMemory implements AutoCloseable {
    private final NativeBuffer buffer;
    private final String group;
    private final int rank;
    private final int worldSize;
    private final Duration defaultTimeout;

    SymmetricMemory(NativeBuffer buffer, String group, int rank, int worldSize, Duration defaultTimeout) {
        this.buffer = buffer;
        this.group = group;
        this.rank = rank;
        this.worldSize = worldSize;
        this.defaultTimeout = defaultTimeout;
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

    /** This rank's buffer, native byte order. */
    public ByteBuffer local() {
        return buffer.view(rank);
    }

    /** Rank {@code peer}'s buffer as mapped here: loads and stores reach that rank's memory. */
    public ByteBuffer peer(int peer) {
        checkRank("peer", peer);
        return buffer.view(peer);
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

    @Override
    public void close() {
        buffer.close();
    }
}
