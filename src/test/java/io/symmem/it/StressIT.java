package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The stress driver (io.symmem.stress.StressMain) as a library user runs it: four ranks, each a
 * plain JVM on the host backend, six threads over three overlapping groups (every rank, {0, 1},
 * {1, 2, 3}), two buffers per thread (each thread allocates its own by name, all threads at once),
 * 10 000 random collectives from a fixed seed, every result
 * checked on every rank; then misuse that must be refused (sizes that differ, a buffer of another
 * group, a second thread on one buffer). Deadlines are generous and nothing depends on timing: a
 * loaded machine makes it slower, never different.
 */
class StressIT {
    @Test
    void threadsGroupsAndBuffersAtOnceGiveOnlyRightResultsAndRefuseMisuse() throws Exception {
        List<RankProcess> ranks = new ArrayList<>();
        try {
            startFourRanks(ranks, "stress", "120s", "--seed", "42", "--collectives", "10000", "--threads", "6", "--buffers", "2");
            for (int r = 0; r < 4; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(300);
                String all = p.output() + p.errors();
                assertThat(all).as(all).contains("STRESS OK").contains("wrong results 0, stalls 0, other failures 0")
                        .contains("plan 10002 collectives over 3 groups");
                assertThat(code).as(all).isZero();
                assertThat(all).as(all).doesNotContain("LogManager");
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    /**
     * The fault rounds (issue 51): seeded late ranks past a 1 s deadline, closes during calls, unnamed
     * allocations and pools crossed between two threads, a second caller, then a rank killed inside a
     * collective. Every result checked exactly: no wrong result, no defect, no hang on any rank; the
     * survivors are told of the kill within seconds and print FAULTS OK. Four plain JVMs, host backend.
     */
    @Test
    void faultRoundsGiveNoWrongResultNoCrashNoHang() throws Exception {
        List<RankProcess> ranks = new ArrayList<>();
        try {
            startFourRanks(ranks, "faults", "1s", "--seed", "21", "--faults", "12", "--kill");
            int killed = -1;
            for (int r = 0; r < 4; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(300);
                String all = p.output() + p.errors();
                if (all.contains("killed now (the kill round)")) {
                    killed = r;
                    assertThat(code).as(all).isEqualTo(3);
                    continue;
                }
                assertThat(all).as(all).contains("FAULTS OK").contains("wrong 0, defects 0, hangs 0").contains("clean refusals")
                        .doesNotContain("WRONG").doesNotContain("DEFECT").doesNotContain("HANG");
                assertThat(code).as(all).isZero();
                java.util.regex.Matcher seen = java.util.regex.Pattern.compile("seen gone after (\\d+) ms").matcher(all);
                assertThat(seen.find()).as(all).isTrue();
                assertThat(Long.parseLong(seen.group(1))).as("how long rank %d took to see the kill", r).isLessThan(10_000);
            }
            assertThat(killed).as("one rank (not 0) was killed").isPositive();
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    /** Four ranks of StressMain as plain JVMs on the host backend, added to {@code ranks} as they start. */
    private static void startFourRanks(List<RankProcess> ranks, String name, String collectiveTimeout, String... args)
            throws Exception {
        String classPath = LibraryExampleIT.libraryClassPath();
        int store = Ports.free();
        for (int r = 0; r < 4; r++) {
            Map<String, String> env = new HashMap<>();
            env.put("RANK", Integer.toString(r));
            env.put("WORLD_SIZE", "4");
            env.put("MASTER_ADDR", "127.0.0.1");
            env.put("MASTER_PORT", Integer.toString(store));
            env.put("SYMMEM_BACKEND", "host");
            env.put("SYMMEM_HOST_THREADS", "1");
            env.put("SYMMEM_TIMEOUT_COLLECTIVE", collectiveTimeout);
            env.put("SYMMEM_TIMEOUT_RENDEZVOUS", "120s");
            ranks.add(RankProcess.startClass(name + r, env, classPath, "io.symmem.stress.StressMain", args));
        }
    }
}
