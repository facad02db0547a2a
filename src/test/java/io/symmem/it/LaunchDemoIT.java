package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The README's demo: 4 rank processes through the real store and the real native library. */
class LaunchDemoIT {

    @Test
    void fourRanksAllReduceAndPass() throws Exception {
        // Ports named, as a user's defaults are: the launcher itself must bind neither (rank 0 would find them taken).
        try (RankProcess launcher = RankProcess.start("launch", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(4)),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(Ports.freeBlock(4))),
                "launch", "-n", "4", "demo", "--sizes", "4KiB,1MiB,1000003", "--min-time-ms", "50")) {
            int code = launcher.exitCode(180);
            String out = launcher.output();
            assertThat(code).as(out).isZero();
            assertThat(out).contains("[0] symmem all-reduce: auto, fp32 sum, 4 ranks, backend host");
            assertThat(out).containsPattern("\\[0\\]\\s+4 KiB\\s+\\d+\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+\\s+auto=one-shot\\s+ok");
            assertThat(out).containsPattern("\\[0\\]\\s+1 MiB\\s+\\d+.*ok");
            // 1000003 bytes round down to 250000 float32 elements: an odd, non-power-of-two size.
            assertThat(out).containsPattern("\\[0\\]\\s+1000000 B\\s+\\d+.*ok");
            assertThat(out).contains("[0] PASS");
            assertThat(out).contains("all 4 ranks exited 0");
            // Ranks leave in order: none mistakes rank 0's store going away for a connection to re-make,
            // and nothing is thrown on the way out.
            assertThat(out).doesNotContain("connection to store").doesNotContain("Exception");
            // The ranks unpacked the native library beside the application's jar, not into ~/.javacpp, which
            // every build with the same jar name shares (a second build rewrote it under the first: SIGBUS).
            Path cache = RankProcess.appJar().resolveSibling("app").resolve(".javacpp-cache");
            try (Stream<Path> files = Files.walk(cache)) {
                assertThat(files.map(f -> f.getFileName().toString())).as(cache.toString()).contains("libsymmem.so");
            }
        }
    }

    @Test
    void twoNodesEachLaunchTheirRanksOfOneWorld() throws Exception {
        // Two "nodes" on this machine, as two pods of the StatefulSet each run one launch: node 1's ranks are
        // RANK 2 and 3 of WORLD_SIZE 4, LOCAL_RANK 0 and 1; node 0's rank 0 serves the store at the fixed port.
        int store = Ports.free();
        try (RankProcess node0 = RankProcess.start("node0", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2)),
                        "SYMMEM_MANAGEMENT_PORT", Integer.toString(Ports.freeBlock(2)), "NNODES", "2", "NODE_RANK", "0"),
                "launch", "-n", "2", "--master-port", Integer.toString(store), "demo", "--sizes", "4KiB", "--min-time-ms", "20");
             RankProcess node1 = RankProcess.start("node1", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2)),
                        "SYMMEM_MANAGEMENT_PORT", Integer.toString(Ports.freeBlock(2))),
                "launch", "--nnodes", "2", "--node-rank", "1", "-n", "2", "--master-port", Integer.toString(store), "demo",
                "--sizes", "4KiB", "--min-time-ms", "20")) {
            assertThat(node0.exitCode(180)).as(node0.output() + node1.output()).isZero();
            assertThat(node1.exitCode(180)).as(node0.output() + node1.output()).isZero();
            assertThat(node0.output()).contains("rank 0 of 4 joined").contains("rank 1 of 4 joined").contains("[0] PASS");
            assertThat(node1.output()).contains("[2] ").contains("rank 2 of 4 joined").contains("rank 3 of 4 joined");
        }
    }

    @Test
    void aJobOfSeveralNodesNeedsAFixedStorePort() throws Exception {
        try (RankProcess launcher = RankProcess.start("nodes-no-port", Map.of(), "launch", "--nnodes", "2", "--node-rank", "1",
                "-n", "2", "demo")) {
            assertThat(launcher.exitCode(60)).isEqualTo(2);
            assertThat(launcher.output()).contains("with --nnodes 2 every node must know where the store is: give --master-port");
        }
    }

    @Test
    void theFirstFailingRankStopsTheOthersAndTheLauncherFails() throws Exception {
        // Rank 2 asks for a different size: every rank fails the size check; the launcher must exit non-zero.
        try (RankProcess launcher = RankProcess.start("launch-mismatch", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(4))),
                "launch", "-n", "4", "demo", "--sizes", "4KiB", "--bytes-of-rank", "2=8192")) {
            int code = launcher.exitCode(180);
            String out = launcher.output();
            assertThat(code).as(out).isNotZero();
            assertThat(out).contains("symmetric buffer sizes differ");
            assertThat(out).containsPattern("symmem launch: rank \\d exited with code 1");
        }
    }

    private static final Pattern STORE_PORT = Pattern.compile("symmem launch: rank 0 serves the store at 127\\.0\\.0\\.1:(\\d+)");

    @Test
    void twoLaunchesAtOnceEachGetTheStorePortTheirRankZeroBound() throws Exception {
        // Without --master-port, rank 0's store binds a free port and the launcher passes it on: two runs
        // started together never reach for the same port (a port probed and then handed on could be).
        try (RankProcess a = RankProcess.start("launch-a", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2))),
                "launch", "-n", "2", "demo", "--sizes", "4KiB", "--min-time-ms", "10");
                RankProcess b = RankProcess.start("launch-b", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2))),
                        "launch", "-n", "2", "demo", "--sizes", "4KiB", "--min-time-ms", "10")) {
            int codeA = a.exitCode(180);
            int codeB = b.exitCode(180);
            assertThat(codeA).as(a.output()).isZero();
            assertThat(codeB).as(b.output()).isZero();
            assertThat(a.output()).contains("[0] PASS").contains("all 2 ranks exited 0");
            assertThat(b.output()).contains("[0] PASS").contains("all 2 ranks exited 0");
            assertThat(storePort(a.output())).isNotEqualTo(storePort(b.output()));
        }
    }

    @Test
    void anExplicitMasterPortIsTheStoresPort() throws Exception {
        int port = Ports.free();
        try (RankProcess launcher = RankProcess.start("launch-port", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2))),
                "launch", "-n", "2", "--master-port", Integer.toString(port), "demo", "--sizes", "4KiB", "--min-time-ms", "10")) {
            int code = launcher.exitCode(180);
            String out = launcher.output();
            assertThat(code).as(out).isZero();
            assertThat(out).contains("[0] PASS").contains("rank 0 hosts the store at 127.0.0.1:" + port)
                    .doesNotContain("symmem launch: rank 0 serves the store at");
        }
    }

    @Test
    void aRankZeroThatCannotServeTheStoreEndsTheLaunchBeforeTheOtherRanksStart() throws Exception {
        // With an external store, rank 0 hosts none, so it cannot take a free port: it says so and exits 2.
        try (RankProcess launcher = RankProcess.start("launch-no-store", Map.of("SYMMEM_STORE_HOST", "symmem",
                "SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(2))), "launch", "-n", "2", "demo")) {
            int code = launcher.exitCode(120);
            String out = launcher.output();
            assertThat(code).as(out).isEqualTo(2);
            assertThat(out).contains("[0] symmem: MASTER_PORT=0 is invalid: a free port (0) can only be taken by the rank that "
                    + "hosts the store").contains("symmem launch: rank 0 exited with code 2 before it served the store")
                    .doesNotContain("[1]");
        }
    }

    private static int storePort(String output) {
        Matcher m = STORE_PORT.matcher(output);
        assertThat(m.find()).as(output).isTrue();
        return Integer.parseInt(m.group(1));
    }
}
