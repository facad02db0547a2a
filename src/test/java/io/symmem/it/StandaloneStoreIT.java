package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * `symmem store` as a sidecar: two runs of ranks rendezvous through one standalone store
 * (SYMMEM_STORE_HOST=symmem), each under its own SYMMEM_RUN_ID, and take their keys away when they
 * leave; a run on the keys of an earlier run that did not end in order forms its world as the next
 * generation, under keys of its own (never pairing with ranks that are gone);
 * SIGTERM stops the store cleanly.
 */
class StandaloneStoreIT {

    @Test
    void runsShareAStandaloneStoreUnderTheirOwnRunIds() throws Exception {
        int storePort = Ports.free();
        try (RankProcess store = RankProcess.start("store", Map.of(), "store", "--bind", "127.0.0.1", "--port",
                Integer.toString(storePort))) {
            store.awaitOutput("symmem store serving on 127.0.0.1:" + storePort, 60);

            String first = runDemo(storePort, "run-a", 0);
            assertThat(first).contains("[0] PASS").contains("all 2 ranks exited 0")
                    .containsPattern("removed this run's \\d+ keys from the store");
            String second = runDemo(storePort, "run-b", 0);
            assertThat(second).contains("[0] PASS").contains("all 2 ranks exited 0");

            try (BlockingStoreClient client = BlockingStoreClient.connect("127.0.0.1", storePort, Duration.ofSeconds(10),
                    TcpStoreClient.Options.forSymmemServer())) {
                // Both runs left in order: the store holds nothing of theirs, so a run id can be used again.
                assertThat(client.listKeys().await().atMost(Duration.ofSeconds(10))).isEmpty();
                assertThat(runDemo(storePort, "run-a", 0)).contains("[0] PASS");

                // A run that did not end in order (simulated: its join count is left behind): the next run on
                // its id forms as generation 1, under keys of its own, and takes every key away when it leaves.
                client.add("symmem/run/run-c/symmem/world/joins", 2).await().atMost(Duration.ofSeconds(10));
                assertThat(runDemo(storePort, "run-c", 0)).contains("[0] PASS").contains("joins generation 1 of its world");
                assertThat(client.listKeys().await().atMost(Duration.ofSeconds(10))).isEmpty();
            }

            // 143 = 128 + SIGTERM: Quarkus reports a signal shutdown like a shell would; what matters is
            // that the store reported and stopped rather than being killed.
            assertThat(store.terminate(30)).as(store.output()).isEqualTo(143);
            assertThat(store.output()).contains("store server on 127.0.0.1:" + storePort + " stopped");
            assertThat(store.output()).containsPattern("symmem store stopping: \\d+ keys, \\d+ connections accepted");
        }
    }

    /** `symmem launch -n 2 demo` against the standalone store; returns its output, checks its exit code. */
    private static String runDemo(int storePort, String runId, int expectedExit) throws Exception {
        try (RankProcess launcher = RankProcess.start("launch-" + runId, Map.of(
                        "SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2)),
                        "SYMMEM_STORE_HOST", "symmem", "SYMMEM_RUN_ID", runId, "SYMMEM_TIMEOUT_RENDEZVOUS", "20s"),
                "launch", "-n", "2", "--master-port", Integer.toString(storePort), "demo", "--sizes", "4KiB",
                "--min-time-ms", "20")) {
            int code = launcher.exitCode(180);
            String out = launcher.output();
            if (expectedExit == 0) {
                assertThat(code).as(out).isZero();
            } else {
                assertThat(code).as(out).isNotZero();
            }
            return out;
        }
    }
}
