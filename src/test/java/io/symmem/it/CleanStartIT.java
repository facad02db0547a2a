package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * A normal start prints no warning, on every Java runtime of this machine that bin/symmem can use
 * (17 in CI; 17 and 25 on the build machine): `bin/symmem serve` in a world of one, up to ready, then
 * SIGTERM. No `WARNING:` line (the JVM's restricted-method and sun.misc.Unsafe warnings), no SLF4J
 * line, no WARN from the application; exit 0. On JDK 25 also `--version` names the AOT cache it runs with.
 */
class CleanStartIT {
    private static final Path ROOT = Path.of("").toAbsolutePath();

    @TestFactory
    List<DynamicTest> aNormalStartPrintsNoWarningOnEveryRuntime() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path java : runtimes()) {
            tests.add(DynamicTest.dynamicTest(java.toString(), () -> startsClean(java)));
        }
        return tests;
    }

    private static void startsClean(Path java) throws Exception {
        int management = Ports.freeBlock(1);
        ProcessBuilder b = new ProcessBuilder(ROOT.resolve("bin/symmem").toString(), "serve").redirectErrorStream(true);
        Path log = Files.createTempFile("symmem-clean-start-", ".log");
        b.redirectOutput(log.toFile());
        Map<String, String> env = b.environment();
        env.keySet().removeIf(k -> k.startsWith("SYMMEM_") || k.startsWith("QUARKUS_") || k.equals("JAVA_TOOL_OPTIONS"));
        env.putAll(Map.of("SYMMEM_JAVA", java.toString(), "WORLD_SIZE", "1", "RANK", "0", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", Integer.toString(Ports.free()), "SYMMEM_HTTP_PORT", Integer.toString(Ports.freeBlock(1)),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(management)));
        Process rank = b.start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (true) {
                try {
                    if (RawHttp.exchange(management, "GET", "/q/health/ready", Map.of(), null).status() == 200) {
                        break;
                    }
                } catch (IOException starting) {
                    // not listening yet
                }
                assertThat(rank.isAlive()).as("%s: the rank is running; output:%n%s", java, Files.readString(log)).isTrue();
                assertThat(System.nanoTime()).as("%s: ready in time; output:%n%s", java, Files.readString(log)).isLessThan(deadline);
                Thread.sleep(100);
            }
            rank.destroy();
            assertThat(rank.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String output = Files.readString(log);
            assertThat(rank.exitValue()).as("%s: SIGTERM is a normal end; output:%n%s", java, output).isZero();
            assertThat(output.lines().filter(l -> l.startsWith("WARNING:") || l.contains("SLF4J") || l.contains(" WARN "))
                    .toList()).as("%s: warnings at a normal start; output:%n%s", java, output).isEmpty();
        } finally {
            rank.destroyForcibly();
        }
        if (JavaRelease.major(java) >= 25 && Files.exists(ROOT.resolve("target/quarkus-app/app.aot"))) {
            Process version = new ProcessBuilder(ROOT.resolve("bin/symmem").toString(), "--version").redirectErrorStream(true)
                    .start();
            String text = new String(version.getInputStream().readAllBytes());
            assertThat(version.waitFor()).isZero();
            assertThat(text).contains("runtime: Java " + JavaRelease.version(java)).contains("AOT cache ");
        }
    }

    /** The runtimes bin/symmem would consider: those under /usr/lib/jvm and the one running this test; 17 and later. */
    private static List<Path> runtimes() {
        Set<Path> found = new LinkedHashSet<>();
        try (DirectoryStream<Path> jvms = Files.newDirectoryStream(Path.of("/usr/lib/jvm"))) {
            for (Path dir : jvms) {
                Path java = dir.resolve("bin/java");
                if (Files.isExecutable(java) && JavaRelease.major(java) >= 17) {
                    found.add(java.toRealPath());
                }
            }
        } catch (IOException none) {
            // no /usr/lib/jvm
        }
        try {
            found.add(Path.of(System.getProperty("java.home"), "bin", "java").toRealPath());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return new ArrayList<>(found);
    }

    /** A runtime's version from its release file. */
    static final class JavaRelease {
        static String version(Path java) throws IOException {
            for (String line : Files.readAllLines(java.toRealPath().getParent().getParent().resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    return line.substring("JAVA_VERSION=".length()).replace("\"", "");
                }
            }
            return "";
        }

        static int major(Path java) {
            try {
                String v = version(java);
                return v.isEmpty() ? 0 : Integer.parseInt(v.split("[.+-]")[0]);
            } catch (IOException | NumberFormatException e) {
                return 0;
            }
        }
    }
}
