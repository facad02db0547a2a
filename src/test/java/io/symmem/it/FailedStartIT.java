package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * A rank that cannot start ends cleanly: one line naming what is wrong, a failing exit status, no
 * stack trace, whatever the command. The case the issue names: a store address that does not resolve,
 * on rank 0 (which hosts the store: it cannot bind) and on rank 1 (which cannot reach it). Before, rank
 * 0 printed Vert.x's "Failed to run close hook: RejectedExecutionException" and its stack after the line.
 */
class FailedStartIT {

    @TestFactory
    List<DynamicTest> anUnresolvableStoreAddressEndsInOneLine() {
        List<DynamicTest> tests = new ArrayList<>();
        for (String command : List.of("demo", "serve", "bench allreduce", "stress --faults 1")) {
            for (int rank : new int[] {0, 1}) {
                tests.add(DynamicTest.dynamicTest(command + " on rank " + rank, () -> endsInOneLine(command, rank)));
            }
        }
        return tests;
    }

    private static void endsInOneLine(String command, int rank) throws Exception {
        int http = Ports.freeBlock(1);
        int management = Ports.freeBlock(1);
        Map<String, String> env = Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", "2", "MASTER_ADDR", "nonexistent.invalid",
                "MASTER_PORT", Integer.toString(Ports.free()), "SYMMEM_TIMEOUT_STORE", "2s", "SYMMEM_TIMEOUT_RENDEZVOUS", "3s",
                "SYMMEM_HTTP_PORT", Integer.toString(http), "SYMMEM_MANAGEMENT_PORT", Integer.toString(management));
        try (RankProcess p = RankProcess.start("failed-start-" + command.replace(' ', '-') + "-" + rank, env, command.split(" "))) {
            int exit = p.exitCode(60);
            String out = p.output();
            List<String> lines = out.lines().filter(l -> !l.isBlank()).toList();
            assertThat(exit).as("exit status; output:%n%s", out).isNotZero();
            assertThat(lines).as("output:%n%s", out).hasSize(1);
            assertThat(lines.get(0)).contains("nonexistent.invalid").contains("rank " + rank).doesNotContain("Exception");
        }
    }
}
