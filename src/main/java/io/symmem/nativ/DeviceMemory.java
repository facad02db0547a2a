package io.symmem.nativ;

/**
 * Memory that a native library can be handed by address: the owner keeps the allocation alive and
 * knows its size, so callers pass (owner, offset, count) and the bounds are checked against the
 * owner before any native call. Sealed because only this package knows the owners' raw pointers:
 * local buffers, and symmetric buffers (their own rank's data, which NCCL's collectives can use
 * through a registered window).
 */
public sealed interface DeviceMemory permits LocalBuffer, NativeBuffer {
    /** Bytes owned. */
    long size();

    /** The backend whose device holds the memory. */
    NativeBackend backend();

    /** True when the memory is on a GPU. */
    boolean isDevice();

    /** True once freed (or its backend closed): its address must not be used. */
    boolean isClosed();
}
