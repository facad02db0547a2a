package io.symmem.nccl;

import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeNccl;
import java.time.Duration;

/**
 * NCCL for the JVM, as torch.cuda.nccl offers it to Python: load the library, its version, unique
 * ids, and groups; communicators are {@link NcclCommunicator}. NCCL is loaded at run time (never
 * linked), once per process: see {@link NcclLibraryCandidates} for where it is looked for.
 */
public final class Nccl {
    private Nccl() {
    }

    /** Loads NCCL from the places {@link NcclLibraryCandidates#fromEnvironment()} lists (once). */
    public static NcclVersion load() {
        return load(NcclLibraryCandidates.fromEnvironment());
    }

    /**
     * Loads NCCL from the first candidate that works; a later call returns the loaded version.
     *
     * @throws NativeException.NoDevice when none loads: the message lists every place and why
     * @throws NativeException.Unsupported when libsymmem was built without CUDA
     */
    public static synchronized NcclVersion load(NcclLibraryCandidates candidates) {
        if (NativeNccl.loaded()) {
            return version();
        }
        if (!NativeCore.builtWithCuda()) {
            throw new NativeException.Unsupported("NCCL needs a libsymmem built with CUDA; this one was built without "
                    + "(nvcc not found at build time)");
        }
        if (candidates.paths().isEmpty()) {
            // Every place named a file that does not exist (SYMMEM_NCCL_LIBRARY set wrong, say): nothing
            // for the loader to try, and the message says where symmem looked.
            throw new NativeException.NoDevice(candidates.notFoundMessage(null));
        }
        try {
            NativeNccl.load(candidates.paths());
        } catch (NativeException.NoDevice e) {
            throw new NativeException.NoDevice(candidates.notFoundMessage(e.getMessage()));
        }
        return version();
    }

    public static boolean isLoaded() {
        return NativeNccl.loaded();
    }

    /** The loaded NCCL's version. */
    public static NcclVersion version() {
        requireLoaded("Nccl.version()");
        int[] v = NativeNccl.version();
        return new NcclVersion(v[1], v[2], v[3], "", v[0]);
    }

    /** The file NCCL was loaded from. */
    public static String libraryPath() {
        requireLoaded("Nccl.libraryPath()");
        return NativeNccl.libraryPath();
    }

    /**
     * NCCL_RUNTIME_CONNECT as NCCL's first communicator init reads it, and where it came from:
     * {@code "NCCL_RUNTIME_CONNECT=0 (set by symmem)"} (every algorithm connected during the init, under
     * its deadline, so no collective waits for a peer in the calling thread) or
     * {@code "NCCL_RUNTIME_CONNECT=<v> (from the environment)"} (docs/nccl.md, "Deadlines and abort").
     */
    public static String runtimeConnect() {
        requireLoaded("Nccl.runtimeConnect()");
        return NativeNccl.runtimeConnect();
    }

    /** A new ncclUniqueId (128 bytes) for {@link NcclCommunicator#initRank}; loads NCCL if needed. */
    public static byte[] uniqueId() {
        load();
        return NativeNccl.uniqueId();
    }

    /** ncclGroupStart on this thread: collectives until {@link #groupEnd} are fused and do not wait. */
    public static void groupStart() {
        requireLoaded("Nccl.groupStart()");
        NativeNccl.groupStart();
    }

    /**
     * ncclGroupEnd on this thread; the outermost end waits until every communicator of the group has
     * taken its operations, up to {@code deadline} (then all of them are aborted).
     */
    public static void groupEnd(Duration deadline) {
        requireLoaded("Nccl.groupEnd()");
        NativeNccl.groupEnd(NcclCommunicator.millis("deadline", deadline));
    }

    static void requireLoaded(String call) {
        if (!NativeNccl.loaded()) {
            throw new IllegalStateException(call + ": NCCL is not loaded (call Nccl.load() first)");
        }
    }
}
