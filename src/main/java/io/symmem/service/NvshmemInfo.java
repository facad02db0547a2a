package io.symmem.service;

import io.symmem.config.Backend;
import io.symmem.config.EffectiveSetting;
import io.symmem.config.LibraryCandidate;
import io.symmem.config.NvshmemEnvironment;
import io.symmem.config.NvshmemLibraryLocator;
import io.symmem.nativ.NativeNvshmem;
import io.symmem.nvshmem.NvshmemTeam;
import io.symmem.nvshmem.NvshmemWorld;
import io.symmem.world.NvshmemStartup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The NVSHMEM part of GET /v1/info. In use: version, library, PE, heap held by symmem's buffers, teams,
 * and the NVSHMEM variables as NVSHMEM itself reads them from this process. Not in use: why not, and
 * whether the library would be found (looked up on disk only: nothing is loaded for a report).
 */
public record NvshmemInfo(String status, String library, String version, Integer pe, Integer pes, Long heapBytes,
        Integer heapBuffers, List<String> teams, Map<String, String> environment) {

    static NvshmemInfo of(Backend asked, NvshmemStartup startup, Map<String, String> env) {
        if (startup != null && startup.world() != null) {
            NvshmemWorld world = startup.world();
            NativeNvshmem.HeapUsage heap = NativeNvshmem.heapUsage();
            Map<String, String> seen = new LinkedHashMap<>();
            for (EffectiveSetting s : NvshmemEnvironment.resolve(env).settings()) {
                NativeNvshmem.getenv(s.variable()).ifPresent(v -> seen.put(s.variable(), v));
            }
            NativeNvshmem.getenv("NVSHMEM_BOOTSTRAP_UID_PLUGIN").ifPresent(v -> seen.put("NVSHMEM_BOOTSTRAP_UID_PLUGIN", v));
            List<String> teams = world.teams().stream().map(NvshmemInfo::describe).toList();
            return new NvshmemInfo(startup.finalized() ? "finalized" : "in use", startup.loaded().path(),
                    startup.loaded().version().toString(), world.rank(), world.worldSize(), heap.bytes(), heap.buffers(),
                    teams, seen);
        }
        String why = asked == Backend.NVSHMEM
                ? "not joined yet (SYMMEM_BACKEND=nvshmem)"
                : "not used: SYMMEM_BACKEND=" + asked.id() + "; auto chooses between cuda and host only, and nvshmem runs "
                        + "only when asked for (SYMMEM_BACKEND=nvshmem)";
        List<LibraryCandidate> candidates = NvshmemLibraryLocator.candidates(env);
        Optional<LibraryCandidate> onDisk = candidates.stream().filter(c -> c.path().contains("/"))
                .filter(c -> Files.isRegularFile(Path.of(c.path()))).findFirst();
        String library = onDisk.map(c -> "found at " + c.path() + " (" + c.origin() + "), not loaded")
                .orElse("not found on disk; looked at " + String.join(", ", candidates.stream().map(LibraryCandidate::path)
                        .toList()) + " (the last is left to the dynamic loader)");
        return new NvshmemInfo(why, library, null, null, null, null, null, List.of(), Map.of());
    }

    private static String describe(NvshmemTeam t) {
        return "ranks " + t.worldRanks() + " (start " + t.start() + ", stride " + t.stride() + ")"
                + (t.isMember() ? ", team " + t.team() : ", not a member");
    }
}
