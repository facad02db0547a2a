package io.symmem;

import io.symmem.collective.AllToAll;
import io.symmem.collective.AllToAllV;
import io.symmem.collective.Broadcast;
import io.symmem.memory.SymmetricMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The façade's collectives that move data without reducing it (broadcast, all-to-all, all-to-all-v) for
 * one group: each issued on its buffer's lane inside the buffer's use, as the reductions are. The checks
 * that a buffer belongs to the group are the group's ({@link SymmemGroup}).
 */
final class DataMovers {
    private final SymmemGroup group;

    DataMovers(SymmemGroup group) {
        this.group = group;
    }

    void broadcast(SymmetricBuffer buffer, SymmetricMemory memory, int root) {
        IssueLane lane = buffer.lane();
        buffer.use("broadcast", () -> lane.issue(group.name(), "broadcast", () -> {
            Broadcast.run(memory, buffer.dtype(), buffer.count(), root, null, lane.stream(), group.collectiveTimeout());
            lane.awaitResult(memory);
        }));
    }

    void allToAll(SymmetricBuffer buffer, SymmetricMemory memory, long blocks) {
        IssueLane lane = buffer.lane();
        buffer.use("allToAll", () -> lane.issue(group.name(), "allToAll", () -> {
            AllToAll.run(memory, buffer.dtype(), blocks, null, lane.stream(), group.collectiveTimeout());
            lane.awaitResult(memory);
        }));
    }

    long capacity(SymmetricBuffer buffer, String what) {
        return splitsOffset(buffer, what) / buffer.dtype().bytes();
    }

    long[] allToAllV(SymmetricBuffer buffer, SymmetricMemory memory, long[] sendCounts) {
        java.util.Objects.requireNonNull(sendCounts, "sendCounts must not be null");
        int size = group.size();
        if (sendCounts.length != size) {
            throw new IllegalArgumentException("allToAllV on group '" + group.name() + "': sendCounts has " + sendCounts.length
                    + " counts; it needs one per rank (" + size + ")");
        }
        long splitsOffset = splitsOffset(buffer, "allToAllV");
        IssueLane lane = buffer.lane();
        if (lane.inGraphOnThisThread()) {
            throw new IllegalStateException("allToAllV on group '" + group.name() + "' inside a graph: its counts go in and"
                    + " come back as copies from and to Java memory, which a CUDA graph does not hold; capture the lower"
                    + " layer's AllToAllV (io.symmem.collective) with counts an earlier kernel writes instead");
        }
        ByteBuffer splits = ByteBuffer.allocateDirect((int) AllToAllV.splitsBytes(size)).order(ByteOrder.nativeOrder());
        for (long n : sendCounts) {
            splits.putLong(n);
        }
        splits.putLong(0).flip();  // the call writes this rank's capacity here
        long[] received = new long[size];
        buffer.use("allToAllV", () -> lane.issue(group.name(), "allToAllV", () -> {
            memory.copyFrom(splits, splitsOffset);
            // The counts come back into the buffer's tail, after the slots: a buffer copy reads them,
            // ordered with this buffer's work alone (a local copy would wait for the whole device).
            long countsOffset = splitsOffset + AllToAllV.splitsBytes(size);
            AllToAllV.runInPlace(memory, buffer.dtype(), splitsOffset, countsOffset, lane.stream(), group.collectiveTimeout());
            lane.awaitResult(memory);
            ByteBuffer counts = ByteBuffer.allocateDirect(Long.BYTES * size).order(ByteOrder.nativeOrder());
            memory.copyTo(counts, countsOffset);
            counts.flip();
            for (int q = 0; q < size; q++) {
                received[q] = counts.getLong();
            }
        }));
        return received;
    }

    private long splitsOffset(SymmetricBuffer buffer, String what) {
        long offset = AllToAllV.facadeSplitsOffset(buffer.sizeBytes(), group.size());
        if (offset < 0) {
            throw new IllegalArgumentException(what + " on group '" + group.name() + "': the buffer's " + buffer.sizeBytes()
                    + " bytes cannot hold the counts of " + group.size() + " ranks ("
                    + (AllToAllV.splitsBytes(group.size()) + AllToAllV.countsBytes(group.size())) + " bytes)");
        }
        return offset;
    }
}
