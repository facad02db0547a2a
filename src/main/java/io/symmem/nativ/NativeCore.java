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

    public static int maxWorld() {
        return SymmemLibrary.SYMMEM_MAX_WORLD;
    }

    public static int signalChannels() {
        return SymmemLibrary.SYMMEM_SIGNAL_CHANNELS;
    }
}
