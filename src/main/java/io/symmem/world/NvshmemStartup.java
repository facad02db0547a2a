package io.symmem.world;

import io.symmem.config.LibraryCandidate;
import io.symmem.config.NvshmemEnvironment;
import io.symmem.config.NvshmemLibraryLocator;
import io.symmem.nativ.NativeException;
import io.symmem.nvshmem.NvshmemCalls;
import io.symmem.nvshmem.NvshmemLibrary;
import io.symmem.nvshmem.NvshmemWorld;
import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A rank's NVSHMEM from start to finalize: found where the configuration says to look, its environment
 * set as PyTorch sets it (and as `symmem config` shows it), joined through the store.
 */
public final class NvshmemStartup {
    private final NvshmemLibrary.Loaded loaded;
    private volatile NvshmemWorld world;
    private volatile boolean finalized;

    private NvshmemStartup(NvshmemLibrary.Loaded loaded) {
        this.loaded = loaded;
    }

    /** Loads NVSHMEM and sets its environment; not found: an error listing every place looked at. */
    static NvshmemStartup load(Map<String, String> env) {
        return load(env, "SYMMEM_BACKEND=nvshmem");
    }

    /** As above; {@code purpose} says in the error what needed NVSHMEM. */
    public static NvshmemStartup load(Map<String, String> env, String purpose) {
        List<LibraryCandidate> candidates = NvshmemLibraryLocator.candidates(env);
        Map<String, String> toExport = NvshmemEnvironment.resolve(env).toExport();
        try {
            return new NvshmemStartup(NvshmemLibrary.load(candidates.stream().map(LibraryCandidate::path).toList(), toExport));
        } catch (NativeException e) {
            throw new IllegalStateException(purpose + ": " + withOrigins(e.getMessage(), candidates)
                    + "\nSet SYMMEM_NVSHMEM_HOME to the directory holding lib/libnvshmem_host.so.3, or install the "
                    + "nvidia-nvshmem-cu13 wheel in the Python environment on PATH", e);
        }
    }

    /**
     * The native "  path: reason" lines with where each path came from ({@code [SYMMEM_NVSHMEM_HOME]},
     * {@code [python3 on PATH]}, ...).
     */
    static String withOrigins(String nativeMessage, List<LibraryCandidate> candidates) {
        String out = nativeMessage;
        for (LibraryCandidate c : candidates) {
            out = out.replace("\n  " + c.path() + ": ", "\n  " + c.path() + " [" + c.origin() + "]: ");
        }
        return out;
    }

    void join(Function<String, StoreExchange> exchanges, int rank, int worldSize, int device, String sharedGpus,
            Duration timeout) {
        world = NvshmemWorld.join(exchanges, rank, worldSize, device, NvshmemCalls.nativeCalls(), sharedGpus, timeout);
    }

    /** Which ranks share a GPU, from the world rendezvous (same host, same device), or null. */
    static String sharedGpus(List<PeerInfo> peers) {
        record Gpu(String host, int device) {
        }
        Map<Gpu, List<Integer>> ranksByGpu = new LinkedHashMap<>();
        for (PeerInfo p : peers) {
            ranksByGpu.computeIfAbsent(new Gpu(p.host(), p.device()), k -> new ArrayList<>()).add(p.rank());
        }
        List<String> shared = ranksByGpu.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .map(e -> "ranks " + e.getValue() + " share GPU " + e.getKey().device() + " of host " + e.getKey().host())
                .toList();
        return shared.isEmpty() ? null : String.join("; ", shared);
    }

    public NvshmemLibrary.Loaded loaded() {
        return loaded;
    }

    /** The joined world (null before). */
    public NvshmemWorld world() {
        return world;
    }

    public boolean finalized() {
        return finalized;
    }

    void finalizeWorld(Duration timeout) {
        NvshmemWorld w = world;
        if (w != null && !finalized) {
            finalized = w.finalizeWorld(timeout);
        }
    }
}
