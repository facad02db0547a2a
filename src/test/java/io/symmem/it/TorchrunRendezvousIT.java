package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A real client re-forms through a symmem store: PyTorch's torchrun, 2 nodes x 2 gloo workers on the
 * CPU, its c10d rendezvous pointed at `symmem store`. A worker is SIGKILLed mid-run; torchrun restarts
 * every worker, they rendezvous again through the store, resume from their checkpoint and finish with
 * the right sums. Everything runs in a network namespace of its own (loopback only).
 */
class TorchrunRendezvousIT {
    private static final Pattern RESULT = Pattern.compile("RESULT rank (\\d) world (\\d) total (\\d+)");

    @Test
    void aKilledWorkerIsRestartedAndTheJobReformsThroughTheSymmemStore() throws Exception {
        Assumptions.assumeTrue(ExternalCommand.run(List.of("unshare", "-rn", "true"), Path.of("."), 30).exit() == 0,
                "skipped: no network namespace (unshare -rn) to keep PyTorch's own servers on a private loopback");
        Path venv = TorchVenv.ensure();
        Path work = Files.createTempDirectory("symmem-torchrun-");
        copyResource("elastic_sum.py", work);
        Path script = copyResource("two-nodes.sh", work);

        ExternalCommand run = ExternalCommand.run(List.of("unshare", "-rn", "bash", script.toString(),
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                RankProcess.appJar().toAbsolutePath().toString(), venv.toString(), work.toString()), work, 300);
        String node0 = Files.readString(work.resolve("node0.log"));
        String node1 = Files.readString(work.resolve("node1.log"));
        String all = run.out() + "\n--- node 0 ---\n" + node0 + "\n--- node 1 ---\n" + node1;

        assertThat(run.exit()).as(all).isZero();
        assertThat(run.out()).as(all).contains("NODE 0 exit 0").contains("NODE 1 exit 0");
        // The kill really happened, once, and the agent of that node restarted its workers. The agent logs
        // only the first worker it found failed: often the killed one (exitcode -9), but sometimes its
        // sibling, whose all-reduce broke on the dead peer's socket first (exitcode 1).
        assertThat(work.resolve("checkpoint.json.killed")).exists();
        assertThat(node0 + node1).as(all).containsPattern("failed \\(exitcode: (-9|1)\\) local_rank: \\d")
                .contains("Worker group FAILED").contains("restart_count=1");
        // Every worker of the restarted attempt resumed after the last step all four had finished.
        for (int rank = 0; rank < 4; rank++) {
            assertThat(node0 + node1).as(all).contains("rank " + rank + " resumes at step 10 ");
        }
        Matcher results = RESULT.matcher(node0 + node1);
        int finished = 0;
        while (results.find()) {
            finished++;
            assertThat(results.group(2)).as(all).isEqualTo("4");
            // sum over steps 0..19 of (1+2+3+4 + 4 x step) = 200 + 4 x 190
            assertThat(results.group(3)).as(all).isEqualTo("960");
        }
        assertThat(finished).as(all).isEqualTo(4);
        assertThat(node0 + node1).as(all).doesNotContain("WRONG");
        // The rendezvous state lives in the symmem store: round 0, then round 1 after the restart.
        assertThat(run.out()).as(all).contains("STORE round 1 complete True participants 2");
        assertThat(run.out()).as(all).contains("STORE exit 143");
    }

    private static Path copyResource(String name, Path dir) throws IOException {
        Path target = dir.resolve(name);
        try (InputStream in = Objects.requireNonNull(TorchrunRendezvousIT.class.getResourceAsStream("/torchrun/" + name),
                "test resource torchrun/" + name)) {
            Files.copy(in, target);
        }
        return target;
    }
}
