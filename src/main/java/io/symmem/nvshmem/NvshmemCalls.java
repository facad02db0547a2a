package io.symmem.nvshmem;

import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeNvshmem;
import io.symmem.nativ.NativeTunables;

/**
 * What {@link NvshmemWorld} asks of NVSHMEM. The product uses {@link #nativeCalls()}; the protocol
 * tests replace it, so that agreement, deadlines and messages are tested without a GPU.
 */
public interface NvshmemCalls {
    byte[] uniqueId();

    /** Blocks until every PE has joined. */
    void init(int device, int rank, int world, byte[] uniqueId);

    void finalizeWorld();

    /** Collective over every PE; -1 on the PEs outside the team. */
    int teamSplitStrided(int start, int stride, int size);

    int teamTranslatePe(int team, int teamPe);

    void teamDestroy(int team);

    /** Live nvshmem buffers of this process. */
    int liveBuffers();

    /** True once this process's native waits were cut short (a peer is known dead). */
    boolean aborted();

    /**
     * {@value #PUSH_SCRATCH_VARIABLE} as libsymmem will read it at the next allocation (its value, or
     * its default when unset): it sizes every buffer's pad region, so nvshmem_malloc's size depends on
     * it as well as on the buffer's.
     */
    long pushScratchBytes();

    String PUSH_SCRATCH_VARIABLE = "SYMMEM_CUDA_PUSH_SCRATCH_BYTES";

    /**
     * {@value #LL128_MAX_VARIABLE} as libsymmem will read it at the next allocation: it sizes the pad
     * region's area for the 128-byte-line one-shot, so nvshmem_malloc's size depends on it too.
     */
    long ll128MaxBytes();

    String LL128_MAX_VARIABLE = "SYMMEM_CUDA_LL128_MAX_BYTES";

    static NvshmemCalls nativeCalls() {
        return new NvshmemCalls() {
            @Override
            public byte[] uniqueId() {
                return NativeNvshmem.uniqueId();
            }

            @Override
            public void init(int device, int rank, int world, byte[] uniqueId) {
                NativeNvshmem.init(device, rank, world, uniqueId);
            }

            @Override
            public void finalizeWorld() {
                NativeNvshmem.finalizeWorld();
            }

            @Override
            public int teamSplitStrided(int start, int stride, int size) {
                return NativeNvshmem.teamSplitStrided(start, stride, size);
            }

            @Override
            public int teamTranslatePe(int team, int teamPe) {
                return NativeNvshmem.teamTranslatePe(team, teamPe);
            }

            @Override
            public void teamDestroy(int team) {
                NativeNvshmem.teamDestroy(team);
            }

            @Override
            public int liveBuffers() {
                return NativeNvshmem.heapUsage().buffers();
            }

            @Override
            public boolean aborted() {
                return NativeCore.aborted();
            }

            @Override
            public long pushScratchBytes() {
                return NativeTunables.value(PUSH_SCRATCH_VARIABLE);
            }

            @Override
            public long ll128MaxBytes() {
                return NativeTunables.value(LL128_MAX_VARIABLE);
            }
        };
    }
}
