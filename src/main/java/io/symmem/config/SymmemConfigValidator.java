package io.symmem.config;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks the relations between values that each value's own check cannot (RANK &lt; WORLD_SIZE, ...).
 * Each value's form and range is {@link ConfigVariable}'s, checked on the raw text before this runs.
 */
public final class SymmemConfigValidator {
    /** Upper bound on ranks in one world: the store is built for it; buffers have their own limit. */
    public static final int MAX_WORLD_SIZE = 1 << 16;

    private SymmemConfigValidator() {
    }

    public static List<String> problems(SymmemConfig c) {
        List<String> problems = new ArrayList<>();
        boolean worldAndRankValid = false;
        if (c.worldSize() < 1 || c.worldSize() > MAX_WORLD_SIZE) {
            problems.add(bad(ConfigVariable.WORLD_SIZE, c.worldSize(), "must be between 1 and " + MAX_WORLD_SIZE));
        } else if (c.rank() < 0 || c.rank() >= c.worldSize()) {
            problems.add(bad(ConfigVariable.RANK, c.rank(), "must satisfy 0 <= RANK < WORLD_SIZE (WORLD_SIZE=" + c.worldSize() + ")"));
        } else {
            worldAndRankValid = true;
        }
        // LOCAL_RANK and LOCAL_WORLD_SIZE default to RANK and WORLD_SIZE: check them only when they
        // were set, or derive from valid values, so one mistake is reported once.
        if (worldAndRankValid || c.localRank().isPresent() || c.localWorldSize().isPresent()) {
            checkLocal(problems, c);
        }
        // A rank that connects may take the port from the file where rank 0 publishes the one it bound.
        boolean portFromRank0 = c.store().portFile().isPresent() && c.store().host() == StoreHost.RANK0;
        if (c.masterPort() == 0 && worldAndRankValid && c.store().url().isEmpty() && !c.store().host().hostedBy(c.rank())
                && !portFromRank0) {
            problems.add(bad(ConfigVariable.MASTER_PORT, 0, "a free port (0) can only be taken by the rank that hosts the store; "
                    + "this one connects to it (RANK=" + c.rank() + ", SYMMEM_STORE_HOST=" + c.store().host().id()
                    + "): give the store's port"));
        }
        if (c.http().port() + Math.max(0, c.effectiveLocalRank()) > 65535) {
            problems.add(bad(ConfigVariable.SYMMEM_HTTP_PORT, c.http().port(),
                    "plus LOCAL_RANK (" + c.effectiveLocalRank() + ") must stay within 65535"));
        }
        return problems;
    }

    private static void checkLocal(List<String> problems, SymmemConfig c) {
        int localWorld = c.effectiveLocalWorldSize();
        if (localWorld < 1 || localWorld > c.worldSize()) {
            problems.add(bad(ConfigVariable.LOCAL_WORLD_SIZE, localWorld,
                    "must satisfy 1 <= LOCAL_WORLD_SIZE <= WORLD_SIZE (WORLD_SIZE=" + c.worldSize() + ")"));
        } else if (c.effectiveLocalRank() < 0 || c.effectiveLocalRank() >= localWorld) {
            problems.add(bad(ConfigVariable.LOCAL_RANK, c.effectiveLocalRank(),
                    "must satisfy 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE (LOCAL_WORLD_SIZE=" + localWorld + ")"));
        }
    }

    private static String bad(ConfigVariable variable, Object value, String rule) {
        return variable.name() + "=" + value + " is invalid: " + rule;
    }
}
