package io.symmem.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every shell script of the repository parses ({@code bash -n}). Most of them run only on the GPU machines
 * (scripts/gpu), where a syntax error would show only after a machine has been started and its time spent.
 */
class ShellScriptsSyntaxTest {
    private static final List<Path> ROOTS = List.of(Path.of("scripts"), Path.of("deploy"), Path.of("src/native-cuda/tests"));

    @Test
    void everyShellScriptParses() throws IOException, InterruptedException {
        assumeTrue(Tools.present("bash"), "bash is not on PATH: the shell scripts' syntax is not checked");
        List<Path> scripts = new ArrayList<>();
        for (Path root : ROOTS) {
            try (Stream<Path> files = Files.walk(root)) {
                files.filter(f -> f.toString().endsWith(".sh")).sorted().forEach(scripts::add);
            }
        }
        assertThat(scripts).as("shell scripts under %s", ROOTS).hasSizeGreaterThan(20);
        List<String> broken = new ArrayList<>();
        for (Path script : scripts) {
            Process p = new ProcessBuilder("bash", "-n", script.toString()).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("bash -n %s finished within 30 s", script).isTrue();
            if (p.exitValue() != 0) {
                broken.add(script + ": " + output.strip());
            }
        }
        assertThat(broken).as("scripts that bash -n rejects").isEmpty();
    }
}
