package io.symmem.nccl;

import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeNccl;

/**
 * A symmetric buffer registered as an NCCL window of one communicator ({@link
 * NcclCommunicator#registerWindow}). While it is registered the buffer cannot be freed; {@link
 * #close} deregisters it (collective over the communicator, within its collective timeout). After
 * the communicator was aborted or closed, NCCL has already released the window and close only frees
 * the record.
 */
public final class NcclWindow implements AutoCloseable {
    private final NcclCommunicator communicator;
    private final NativeNccl.Window window;
    private final NativeBuffer buffer;

    NcclWindow(NcclCommunicator communicator, NativeNccl.Window window, NativeBuffer buffer) {
        this.communicator = communicator;
        this.window = window;
        this.buffer = buffer;
    }

    public NcclCommunicator communicator() {
        return communicator;
    }

    /** The registered buffer; {@code NcclBuffer.of(buffer())} is its data for NCCL's collectives. */
    public NativeBuffer buffer() {
        return buffer;
    }

    public synchronized boolean isClosed() {
        return window.isDeregistered();
    }

    @Override
    public synchronized void close() {
        if (!window.isDeregistered()) {
            communicator.deregister(window);
        }
    }

    @Override
    public String toString() {
        return "NCCL window of " + buffer.size() + " bytes on " + communicator;
    }
}
