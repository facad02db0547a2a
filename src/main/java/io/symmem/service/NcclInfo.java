package io.symmem.service;

import io.symmem.config.Backend;
import io.symmem.nccl.Nccl;
import io.symmem.nccl.NcclCommunicator;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclLibraryCandidates;
import io.symmem.nccl.NcclVersion;
import java.util.List;
import java.util.Optional;

/**
 * The NCCL part of GET /v1/info. Loaded: version, library, whether symmetric windows are possible
 * (2.27+), and with SYMMEM_BACKEND=nccl the communicators of this rank's groups. Not loaded: why
 * not, and whether the library would be found (looked up on disk only: nothing is loaded for a
 * report).
 */
public record NcclInfo(String status, String library, String version, Boolean windows, List<String> communicators) {

    static NcclInfo of(Backend asked, NcclGroups groups) {
        return of(asked, groups, Nccl.isLoaded(), NcclLibraryCandidates.fromEnvironment());
    }

    static NcclInfo of(Backend asked, NcclGroups groups, boolean loaded, NcclLibraryCandidates candidates) {
        if (loaded) {
            NcclVersion v = Nccl.version();
            List<String> comms = groups == null ? List.of()
                    : groups.communicators().stream().map(NcclInfo::describe).toList();
            String status = groups != null ? "in use (SYMMEM_BACKEND=nccl)" : "loaded (through the Java API)";
            return new NcclInfo(status, Nccl.libraryPath(), v.toString(), v.atLeast(2, 27), comms);
        }
        String why = asked == Backend.NCCL
                ? "not loaded yet (SYMMEM_BACKEND=nccl)"
                : "not loaded: SYMMEM_BACKEND=" + asked.id() + "; auto never chooses nccl (SYMMEM_BACKEND=nccl does), "
                        + "and the Java API loads it on first use";
        Optional<NcclLibraryCandidates.Place> onDisk = candidates.places().stream()
                .filter(NcclLibraryCandidates.Place::candidate).filter(p -> p.path().contains("/")).findFirst();
        String library = onDisk.map(p -> "found at " + p.path() + " (" + p.source() + "), not loaded")
                .orElse("not found on disk; " + NcclLibraryCandidates.SONAME + " is left to the dynamic loader");
        return new NcclInfo(why, library, null, null, List.of());
    }

    private static String describe(NcclCommunicator c) {
        return c + (c.isClosed() ? ", closed" : c.isAborted() ? ", aborted" : "");
    }
}
