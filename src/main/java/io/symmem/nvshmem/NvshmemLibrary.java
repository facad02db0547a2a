package io.symmem.nvshmem;

import io.symmem.nativ.NativeNvshmem;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Loads NVSHMEM's host library into this process and sets the variables NVSHMEM must find in its
 * environment, before NVSHMEM reads it (its first call): the product's order of things at start-up.
 */
public final class NvshmemLibrary {
    private static final Logger LOG = Logger.getLogger(NvshmemLibrary.class);

    /** What was loaded, and what symmem set for NVSHMEM. */
    public record Loaded(String path, NativeNvshmem.Version version, Map<String, String> exported) {
    }

    private NvshmemLibrary() {
    }

    /**
     * @param candidates where to look, in order (the error lists each with why it failed)
     * @param toExport   variables to set for NVSHMEM (none of them set by the user)
     */
    public static Loaded load(List<String> candidates, Map<String, String> toExport) {
        String path = NativeNvshmem.load(candidates);
        NativeNvshmem.Version version = NativeNvshmem.version();
        toExport.forEach(NativeNvshmem::setenv);
        LOG.infof("NVSHMEM %s loaded from %s%s", version, path,
                toExport.isEmpty() ? "" : "; set for it: " + toExport);
        return new Loaded(path, version, Map.copyOf(toExport));
    }
}
