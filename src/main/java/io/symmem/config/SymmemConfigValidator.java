package io.symmem.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Checks the relations between values that types alone cannot (RANK < WORLD_SIZE, ...). */
public final class SymmemConfigValidator {
    /** Upper bound on ranks in one world: the store is built for it; buffers have their own limit. */
    public static final int MAX_WORLD_SIZE = 1 << 16;

    /** Heartbeats go out several times per liveness bound; below this they would flood the store. */
    static final Duration MIN_LIVENESS = Duration.ofMillis(300);
    static final Duration MAX_LIVENESS = Duration.ofMinutes(10);

    private static final java.util.regex.Pattern RUN_ID = java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,128}");

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
        if (c.masterAddr().isBlank()) {
            problems.add(bad(ConfigVariable.MASTER_ADDR, "''", "must name a host"));
        }
        checkPort(problems, ConfigVariable.MASTER_PORT, c.masterPort());
        c.runId().filter(id -> !RUN_ID.matcher(id).matches())
                .ifPresent(id -> problems.add(bad(ConfigVariable.SYMMEM_RUN_ID, "'" + id + "'",
                        "must be 1 to 128 letters, digits, '.', '_' or '-' (it becomes a store key segment)")));
        checkPort(problems, ConfigVariable.SYMMEM_HTTP_PORT, c.http().port());
        if (c.http().port() + Math.max(0, c.effectiveLocalRank()) > 65535) {
            problems.add(bad(ConfigVariable.SYMMEM_HTTP_PORT, c.http().port(),
                    "plus LOCAL_RANK (" + c.effectiveLocalRank() + ") must stay within 65535"));
        }
        checkPositive(problems, ConfigVariable.SYMMEM_TIMEOUT_STORE, c.timeout().store());
        checkPositive(problems, ConfigVariable.SYMMEM_TIMEOUT_RENDEZVOUS, c.timeout().rendezvous());
        checkPositive(problems, ConfigVariable.SYMMEM_TIMEOUT_BARRIER, c.timeout().barrier());
        checkPositive(problems, ConfigVariable.SYMMEM_TIMEOUT_COLLECTIVE, c.timeout().collective());
        Duration liveness = c.timeout().liveness();
        if (liveness.compareTo(MIN_LIVENESS) < 0 || liveness.compareTo(MAX_LIVENESS) > 0) {
            problems.add(bad(ConfigVariable.SYMMEM_TIMEOUT_LIVENESS, liveness,
                    "must be between 300ms and 10m"));
        }
        checkRange(problems, ConfigVariable.SYMMEM_STORE_MAX_KEY_BYTES, c.store().maxKeyBytes(), ConfigVariable.Limits.MAX_KEY_BYTES);
        checkRange(problems, ConfigVariable.SYMMEM_STORE_MAX_VALUE_BYTES, c.store().maxValueBytes(), Integer.MAX_VALUE);
        checkRange(problems, ConfigVariable.SYMMEM_STORE_MAX_KEYS_PER_REQUEST, c.store().maxKeysPerRequest(),
                ConfigVariable.Limits.MAX_KEYS_PER_REQUEST);
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

    private static void checkPort(List<String> problems, ConfigVariable variable, int port) {
        if (port < 1 || port > 65535) {
            problems.add(bad(variable, port, "must be a TCP port, 1..65535"));
        }
    }

    private static void checkRange(List<String> problems, ConfigVariable variable, int value, int max) {
        if (value < 1 || value > max) {
            problems.add(bad(variable, value, "must be between 1 and " + max));
        }
    }

    private static void checkPositive(List<String> problems, ConfigVariable variable, Duration d) {
        if (d.isNegative() || d.isZero()) {
            problems.add(bad(variable, d, "must be a positive duration such as 30s"));
        } else if (d.toMillis() > Integer.MAX_VALUE) {
            problems.add(bad(variable, d, "must be shorter than 24 days"));
        }
    }

    private static String bad(ConfigVariable variable, Object value, String rule) {
        return variable.name() + "=" + value + " is invalid: " + rule;
    }
}
