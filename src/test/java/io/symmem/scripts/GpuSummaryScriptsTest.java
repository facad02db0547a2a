package io.symmem.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Python that turns the GPU scripts' logs into tables (scripts/gpu/*_summary.py) reads the formats
 * the benches print: its unit tests (scripts/gpu/test_*.py, on sample logs under scripts/gpu/testdata)
 * run here, so that a change of a bench's output or of a parser shows before a device run does.
 */
class GpuSummaryScriptsTest {
    @Test
    void theSummaryParsersReadTheBenchesSampleLogs() throws IOException, InterruptedException {
        assumeTrue(Tools.present("python3"), "python3 is not on PATH: the summary scripts' tests are not run");
        ProcessBuilder pb = new ProcessBuilder("python3", "-m", "unittest", "discover", "-s", "scripts/gpu", "-p", "test_*.py")
                .redirectErrorStream(true);
        pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("python3 -m unittest finished within 60 s").isTrue();
        assertThat(p.exitValue()).as("python3 -m unittest discover -s scripts/gpu -p 'test_*.py':%n%s", output).isZero();
        assertThat(output).as("the tests ran").containsPattern("Ran [1-9][0-9]* tests?");
    }
}
