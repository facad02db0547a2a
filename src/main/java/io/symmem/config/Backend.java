package io.symmem.config;

/** Which native backend holds symmetric buffers. */
public enum Backend {
    /** cuda when this process has a CUDA device, host otherwise. */
    AUTO,
    /** Shared memory (memfd) among the ranks of one machine: runs anywhere. */
    HOST,
    /** CUDA virtual memory across the GPUs of one node. */
    CUDA,
    /** NVSHMEM's symmetric heap, bootstrapped through the store; never chosen by auto. */
    NVSHMEM,
    /** ncclMemAlloc memory registered as NCCL symmetric windows; never chosen by auto. */
    NCCL;

    public String id() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
