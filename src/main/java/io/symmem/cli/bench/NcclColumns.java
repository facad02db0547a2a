package io.symmem.cli.bench;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import io.symmem.nccl.NcclBuffer;
import io.symmem.nccl.NcclCommunicator;
import io.symmem.nccl.NcclDataType;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclRedOp;
import io.symmem.nccl.NcclWindow;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.time.Duration;

/**
 * What {@code bench allreduce --nccl} times beside symmem's kernels: NCCL's allReduce through the
 * Java API on plain device memory, and on the bench's symmetric buffer as an NCCL symmetric window.
 * On the nccl backend the buffer already is a window of its group's communicator; on cuda the
 * bench makes a communicator and registers the buffer itself (NCCL registers any cuMem memory).
 */
final class NcclColumns implements AutoCloseable {
    private final NcclCommunicator communicator;
    private final boolean ownCommunicator;
    private final NcclWindow ownWindow;
    private final LocalBuffer plain;
    private final NcclBuffer plainBuffer;
    private final NcclBuffer windowBuffer;

    private NcclColumns(NcclCommunicator communicator, boolean ownCommunicator, NcclWindow ownWindow, LocalBuffer plain,
            SymmetricMemory memory) {
        this.communicator = communicator;
        this.ownCommunicator = ownCommunicator;
        this.ownWindow = ownWindow;
        this.plain = plain;
        this.plainBuffer = NcclBuffer.of(plain);
        this.windowBuffer = NcclBuffer.of(memory.nativeBuffer());
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
        NcclWindow window = null;
        LocalBuffer plain = null;
        try {
            window = groups != null ? null : communicator.registerWindow(memory.nativeBuffer());
            plain = memory.allocateLocal(bytes);
            return new NcclColumns(communicator, groups == null, window, plain, memory);
        } catch (RuntimeException e) {
            if (plain != null) {
                plain.close();
            }
            if (window != null) {
                window.close();
            }
            if (groups == null) {
                communicator.close();
            }
            throw e;
        }
    }

    void plain(long count, NcclDataType dtype, NcclRedOp op, NativeStream stream) {
        communicator.allReduce(plainBuffer, plainBuffer, count, dtype, op, stream);
    }

    void window(long count, NcclDataType dtype, NcclRedOp op, NativeStream stream) {
        communicator.allReduce(windowBuffer, windowBuffer, count, dtype, op, stream);
    }

    @Override
    public void close() {
        plain.close();
        if (ownWindow != null) {
            ownWindow.close();
        }
        if (ownCommunicator) {
            communicator.close();
        }
    }
}
