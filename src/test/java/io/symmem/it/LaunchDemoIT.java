package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The README's demo: 4 rank processes through the real store and the real native library. */
class LaunchDemoIT {

    @Test
    void fourRanksAllReduceAndPass() throws Exception {
        try (RankProcess launcher = RankProcess.start("launch", Map.of("SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(4))),
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
}
