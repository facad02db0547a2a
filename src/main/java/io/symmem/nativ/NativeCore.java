package io.symmem.nativ;

import org.bytedeco.javacpp.IntPointer;

/** Library-wide facts of libsymmem: version, build features, devices. */
public final class NativeCore {
    static {
        SymmemLibrary.ensureLoaded();
    }

    private NativeCore() {
    }

    public static String version() {
        return SymmemLibrary.symmem_version().getString();
    }

    public static int abiVersion() {
        return SymmemLibrary.symmem_abi_version();
    }

    public static boolean builtWithCuda() {
        return SymmemLibrary.symmem_built_with_cuda() != 0;
    }

    /** CUDA devices this process can use; 0 without a driver or GPU. */
    public static int cudaDeviceCount() {
        try (IntPointer out = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_cuda_device_count(out), "symmem_cuda_device_count");
            return out.get();
        }
    }

    /**
     * Cuts short every native wait of this process, running or future (barriers, signals,
     * collectives, fd exchanges, device kernels): they fail with {@link NativeException.Aborted}
     * carrying {@code reason}. For when a peer is known to be dead. The first reason is kept.
     */
    public static void abort(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("abort reason must be a non-empty text");
        }
        Status.check(SymmemLibrary.symmem_abort(reason), "symmem_abort");
    }

    /** Undoes {@link #abort}: native waits wait until their deadline again. */
    public static void resetAbort() {
        SymmemLibrary.symmem_abort_reset();
    }

    public static boolean aborted() {
        return SymmemLibrary.symmem_aborted() != 0;
    }

    public static int maxWorld() {
        return SymmemLibrary.SYMMEM_MAX_WORLD;
    }

    public static int signalChannels() {
        return SymmemLibrary.SYMMEM_SIGNAL_CHANNELS;
    }
}
