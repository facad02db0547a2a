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
 * Every shell script of the repository parses ({@code bash -n}): the .sh files and bin's bash commands. Most
 * of them run only on the GPU machines (scripts/gpu), where a syntax error would show only after a machine
 * has been started and its time spent.
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
        try (Stream<Path> files = Files.list(Path.of("bin"))) {
            files.filter(ShellScriptsSyntaxTest::isBashScript).sorted().forEach(scripts::add);
        }
        assertThat(scripts).as("shell scripts under %s and bin", ROOTS).hasSizeGreaterThan(25);
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

    /** bin's commands have no .sh: a bash shebang says which of them are bash. */
    private static boolean isBashScript(Path file) {
        try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String first = in.readLine();
            return first != null && first.startsWith("#!") && first.contains("bash");
        } catch (IOException e) {
            return false;
        }
    }
}
