package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/index.md's Java quick start, run as the page says: the example project of docs/examples/library
 * (its pom.xml and AllReduceExample.java, which the page shows verbatim), built by Maven against the
 * packaged symmem installed in a local repository, its class path written by the page's command, and two
 * ranks started with the page's lines. Only MASTER_PORT is moved to a free port, so that runs on one
 * machine do not meet. Maven runs offline on a local repository made of this machine's (linked, not
 * copied) plus the symmem artifact, so the machine's own repository is left as it was.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class QuickStartIT {
    private static final Path INDEX = Path.of("docs", "index.md");
    private static final Path EXAMPLE = Path.of("docs", "examples", "library");

    @Test
    void theJavaQuickStartRunsAsWritten() throws Exception {
        Path work = Files.createTempDirectory("symmem-quickstart");
        Path repository = overlayRepository(work.resolve("repository"));
        Path project = work.resolve("project");
        copy(EXAMPLE, project);
        Files.createDirectories(project.resolve(".mvn"));
        Files.writeString(project.resolve(".mvn/maven.config"), "-o -Dmaven.repo.local=" + repository + "\n");

        Path jar = Path.of(System.getProperty("symmem.library.jar", "target/symmem-0.1.0-SNAPSHOT.jar")).toAbsolutePath();
        assertThat(jar).as("the packaged library jar (run mvn verify)").exists();
        Result install = run(Path.of("."), List.of("mvn", "-B", "-q", "-o", "-Dmaven.repo.local=" + repository,
                "install:install-file", "-Dfile=" + jar, "-DpomFile=pom.xml"));
        assertThat(install.exit).as(install.output).isZero();

        String script = javaQuickStartRun().replace("MASTER_PORT=29500", "MASTER_PORT=" + Ports.free());
        Result quickStart = run(project, List.of("bash", "-ec", script));
        assertThat(quickStart.exit).as(script + "\n" + quickStart.output).isZero();
        for (int rank = 0; rank < 2; rank++) {
            assertThat(quickStart.output).as(quickStart.output).contains("rank " + rank + " of 2 (host): [1.0, 2.0, 4.0, 6.0]");
        }
    }

    /** The quick start's second shell block: build, class path, two ranks. */
    private static String javaQuickStartRun() throws IOException {
        String index = Files.readString(INDEX);
        String section = index.substring(index.indexOf("## Quick start: a Java program"), index.indexOf("## Quick start: a PyTorch job"));
        Matcher block = Pattern.compile("```sh\\n(.*?)```", Pattern.DOTALL).matcher(section);
        List<String> blocks = new ArrayList<>();
        while (block.find()) {
            blocks.add(block.group(1));
        }
        assertThat(blocks).as("the Java quick start's shell blocks: install, then build and run").hasSize(2);
        return "export SYMMEM_BACKEND=host\n" + blocks.get(1);
    }

    /**
     * A local repository whose entries link to this machine's (so everything the build resolved is there),
     * except io/symmem, which the test installs into.
     */
    private static Path overlayRepository(Path overlay) throws IOException {
        Path local = Path.of(System.getProperty("maven.repo.local", System.getProperty("user.home") + "/.m2/repository"));
        assertThat(local).as("the local Maven repository").isDirectory();
        Files.createDirectories(overlay.resolve("io"));
        try (Stream<Path> top = Files.list(local)) {
            for (Path entry : (Iterable<Path>) top::iterator) {
                if (!entry.getFileName().toString().equals("io")) {
                    Files.createSymbolicLink(overlay.resolve(entry.getFileName().toString()), entry);
                }
            }
        }
        if (Files.isDirectory(local.resolve("io"))) {
            try (Stream<Path> io = Files.list(local.resolve("io"))) {
                for (Path entry : (Iterable<Path>) io::iterator) {
                    if (!entry.getFileName().toString().equals("symmem")) {
                        Files.createSymbolicLink(overlay.resolve("io").resolve(entry.getFileName().toString()), entry);
                    }
                }
            }
        }
        return overlay;
    }

    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Path dir, List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("symmem-quickstart", ".log");
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        boolean done = p.waitFor(8, TimeUnit.MINUTES);
        if (!done) {
            p.destroyForcibly();
        }
        return new Result(done ? p.exitValue() : -1, Files.readString(log));
    }
}
