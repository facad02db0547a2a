package io.symmem.cli.bench;

import io.symmem.collective.DType;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import io.symmem.nccl.NcclBuffer;
import io.symmem.nccl.NcclCommunicator;
import io.symmem.nccl.NcclDataType;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclRedOp;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code bench allreduce --nccl} times beside symmem's kernels: NCCL's allReduce through the
 * Java API on plain device memory, and on the bench's symmetric buffer as an NCCL symmetric window,
 * each in place and out of place (into a second plain buffer, or a second symmetric buffer that is a
 * window too: NCCL's symmetric kernels need both sides registered). On the nccl backend every buffer
 * already is a window of its group's communicator; on cuda the bench makes a communicator and
 * registers the buffers itself (NCCL registers any cuMem memory). Each variant also as NCCL's own C loop in this
 * process ({@link NcclCommunicator#allReduceRepeated}): the same calls on the same buffers, made by C.
 */
final class NcclColumns implements AutoCloseable {
    private final NcclCommunicator communicator;
    private final boolean ownCommunicator;
    private final List<AutoCloseable> owned;
    private final LocalBuffer plain;
    private final NcclBuffer plainBuffer;
    private final NcclBuffer plainOut;
    private final NcclBuffer windowBuffer;
    private final NcclBuffer windowOut;

    private NcclColumns(NcclCommunicator communicator, boolean ownCommunicator, List<AutoCloseable> owned, LocalBuffer plain,
            LocalBuffer plainOut, SymmetricMemory memory, SymmetricMemory memoryOut) {
        this.communicator = communicator;
        this.ownCommunicator = ownCommunicator;
        this.owned = owned;
        this.plain = plain;
        this.plainBuffer = NcclBuffer.of(plain);
        this.plainOut = NcclBuffer.of(plainOut);
        this.windowBuffer = NcclBuffer.of(memory.nativeBuffer());
        this.windowOut = NcclBuffer.of(memoryOut.nativeBuffer());
    }

    static NcclColumns open(RankRuntime runtime, StoreExchange group, SymmetricMemory memory, long bytes) {
        if (!memory.isDevice()) {
            throw new IllegalArgumentException("--nccl needs a GPU backend (SYMMEM_BACKEND=cuda or nccl), this run uses "
                    + runtime.backend().name());
        }
        Duration deadline = runtime.config().timeout().rendezvous();
        NcclGroups groups = runtime.ncclGroups();
        NcclCommunicator communicator = groups != null ? groups.communicator(group, deadline)
                : NcclCommunicator.create(group, runtime.backend().device(), deadline, runtime.config().timeout().collective());
        // Closed in reverse order: windows before their buffers.
        List<AutoCloseable> owned = new ArrayList<>();
        try {
            SymmetricMemory memoryOut = runtime.allocator().allocate(group, bytes, deadline);
            owned.add(memoryOut);
            if (groups == null) {
                owned.add(communicator.registerWindow(memory.nativeBuffer()));
                owned.add(communicator.registerWindow(memoryOut.nativeBuffer()));
            }
            LocalBuffer plain = memory.allocateLocal(bytes);
            owned.add(plain);
            LocalBuffer plainOut = memory.allocateLocal(bytes);
            owned.add(plainOut);
            return new NcclColumns(communicator, groups == null, owned, plain, plainOut, memory, memoryOut);
        } catch (RuntimeException e) {
            closeAll(owned, e);
            if (groups == null) {
                communicator.close();
            }
            throw e;
        }
    }

    /** The plain input gets the values the symmetric buffer got (LaunchTimer.fillRandom), not zeros. */
    void fillPlainRandom(long bytes, DType dtype, int rank) {
        LaunchTimer.fillRandom(plain, bytes, dtype, rank);
    }

    /** n calls of the variant, each from Java. */
    void runTimes(Variant v, long count, NcclDataType dtype, NcclRedOp op, NativeStream stream, long n) {
        NcclBuffer send = send(v), recv = recv(v);
        for (long i = 0; i < n; i++) {
            communicator.allReduce(send, recv, count, dtype, op, stream);
        }
    }

    /** n calls of the variant made by one C loop (in batches of at most Integer.MAX_VALUE). */
    void runInC(Variant v, long count, NcclDataType dtype, NcclRedOp op, NativeStream stream, long n) {
        NcclBuffer send = send(v), recv = recv(v);
        for (long left = n; left > 0; left -= Integer.MAX_VALUE) {
            communicator.allReduceRepeated(send, recv, count, dtype, op, stream, (int) Math.min(left, Integer.MAX_VALUE));
        }
    }

    private NcclBuffer send(Variant v) {
        return v.window ? windowBuffer : plainBuffer;
    }

    /** In place: the input itself; out of place: the second buffer of the input's kind. */
    private NcclBuffer recv(Variant v) {
        return !v.outOfPlace ? send(v) : v.window ? windowOut : plainOut;
    }

    /** The variants, each with the column of its Java calls and of its C loop. */
    enum Variant {
        PLAIN(CollectiveBenchRunner.NCCL_PLAIN, false, false),
        WINDOW(CollectiveBenchRunner.NCCL_WINDOW, true, false),
        PLAIN_OOP(CollectiveBenchRunner.NCCL_PLAIN_OOP, false, true),
        WINDOW_OOP(CollectiveBenchRunner.NCCL_WINDOW_OOP, true, true);

        final String column;
        final boolean window;
        final boolean outOfPlace;

        Variant(String column, boolean window, boolean outOfPlace) {
            this.column = column;
            this.window = window;
            this.outOfPlace = outOfPlace;
        }

        /** The column of the same calls made by NCCL's own C loop in this process. */
        String cColumn() {
            return column + CollectiveBenchRunner.C_LOOP_SUFFIX;
        }
    }

    private static void closeAll(List<AutoCloseable> owned, RuntimeException failure) {
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                if (failure != null) {
                    failure.addSuppressed(e);
                } else {
                    throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
                }
            }
        }
    }

    @Override
    public void close() {
        closeAll(owned, null);
        if (ownCommunicator) {
            communicator.close();
        }
    }
}
