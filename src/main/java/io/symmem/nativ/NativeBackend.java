package io.symmem.nativ;

/** An opened libsymmem backend ("host", "cuda", "nvshmem" or "nccl") on one device. */
public final class NativeBackend implements AutoCloseable {
    // volatile, so that isOpen() needs no lock: it is asked on every NCCL call (through its buffers' isClosed).
    private volatile SymmemLibrary.BackendHandle handle = new SymmemLibrary.BackendHandle();
    private final String name;
    private final boolean onGpu;
    private final String deviceName;
    private final int device;
    private final int deviceCount;

    public NativeBackend(String name, int device) {
        Status.check(SymmemLibrary.symmem_backend_open(name, device, handle), "symmem_backend_open");
        try (SymmemLibrary.BackendInfo info = new SymmemLibrary.BackendInfo()) {
            Status.check(SymmemLibrary.symmem_backend_get_info(handle, info), "symmem_backend_get_info");
            this.name = info.name().getString();
            this.deviceName = info.deviceName().getString();
            this.device = info.device();
            this.deviceCount = info.deviceCount();
            this.onGpu = "cuda".equals(this.name) || "nvshmem".equals(this.name) || "nccl".equals(this.name);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public String name() {
        return name;
    }

    public String deviceName() {
        return deviceName;
    }

    /** Device ordinal; -1 for the host backend. */
    public int device() {
        return device;
    }

    public int deviceCount() {
        return deviceCount;
    }

    /** True for the cuda, nvshmem and nccl backends: buffers live in GPU memory, without a host view. */
    public boolean isDevice() {
        return onGpu;
    }

    /** True for the nccl backend: buffers in ncclMemAlloc memory, registered as NCCL windows. */
    public boolean isNccl() {
        return "nccl".equals(name);
    }

    /** True for the nvshmem backend: buffers come from NVSHMEM's symmetric heap (world-collective). */
    public boolean isNvshmem() {
        return "nvshmem".equals(name);
    }

    /** Allocates this rank's part of a symmetric buffer (not yet mapped to peers). */
    public NativeBuffer allocate(long sizeBytes) {
        return new NativeBuffer(this, sizeBytes);
    }

    /**
     * Local (non-symmetric) memory of this backend's device, zero-filled: the place for
     * out-of-place results. Closing the backend frees it too.
     */
    public LocalBuffer allocateLocal(long bytes) {
        return new LocalBuffer(this, bytes);
    }

    /** A new stream of this backend's device (non-blocking CUDA stream; the default one on host). */
    public NativeStream createStream() {
        return new NativeStream(this);
    }

    boolean isOpen() {
        return handle != null;
    }

    SymmemLibrary.BackendHandle open() {
        if (handle == null) {
            throw new IllegalStateException("backend " + name + " is closed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != null) {
            SymmemLibrary.symmem_backend_close(handle);
            handle = null;
        }
    }
}
