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
        String classPath = LibraryExampleIT.libraryClassPath();
        int store = Ports.free();
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 4; r++) {
                Map<String, String> env = new HashMap<>();
                env.put("RANK", Integer.toString(r));
                env.put("WORLD_SIZE", "4");
                env.put("MASTER_ADDR", "127.0.0.1");
                env.put("MASTER_PORT", Integer.toString(store));
                env.put("SYMMEM_BACKEND", "host");
                env.put("SYMMEM_HOST_THREADS", "1");
                env.put("SYMMEM_TIMEOUT_COLLECTIVE", "120s");
                env.put("SYMMEM_TIMEOUT_RENDEZVOUS", "120s");
                ranks.add(RankProcess.startClass("stress" + r, env, classPath, "io.symmem.stress.StressMain",
                        "--seed", "42", "--collectives", "10000", "--threads", "6", "--buffers", "2"));
            }
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
}
