package io.symmem.scripts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/aot-train runs inside the build (before the integration tests), so whatever its training run does,
 * the script must end: a JVM whose shutdown hangs, or a probe that a port's listener never answers, once
 * held a CI run until its 90-minute limit. Each case runs the real script against a stand-in for the
 * Java runtime (a script behind a JDK 25 release file), which plays the failure.
 */
class AotTrainScriptTest {
    /** Well above what each case needs when it passes, well below what a case that hangs would take. */
    private static final Duration SCRIPT_LIMIT = Duration.ofSeconds(60);

    @TempDir
    Path root;

    private Path javaBin;
    private Path app;

    @BeforeEach
    void copyTheScriptsBesideAFakeRuntime() throws IOException {
        Files.createDirectories(root.resolve("bin"));
        for (String script : new String[] {"aot-train", "java-select"}) {
            Files.copy(Path.of("bin", script), root.resolve("bin").resolve(script), StandardCopyOption.COPY_ATTRIBUTES);
        }
        app = Files.createDirectories(root.resolve("target/quarkus-app"));
        Files.writeString(app.resolve("quarkus-run.jar"), "");
        Path jdk = Files.createDirectories(root.resolve("jdk/bin"));
        Files.writeString(root.resolve("jdk/release"), "JAVA_VERSION=\"25.0.9\"\n");
        javaBin = jdk.resolve("java");
    }

    @Test
    void aTrainingRunThatIgnoresTermIsDumpedAndKilledAtItsDeadlineAndLeavesNoCache() throws Exception {
        assumeTrue(Tools.present("bash") && Tools.present("timeout") && Tools.present("python3"),
                "bash, timeout or python3 is missing: the stand-in runtime cannot run here");
        Path pidFile = root.resolve("training.pid");
        Path quits = root.resolve("quits");
        // Answers SIGQUIT as a JVM does: a thread dump (here of 20,000 lines), and on it goes. Like a JVM it
        // unblocks SIGQUIT for itself, which a JVM parent (this test's, or Maven's) passes on blocked.
        fakeJava("#!/usr/bin/env python3", """
                import os, signal, time
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGQUIT, lambda *_: open("%s", "a").write("quit\\n"))
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGQUIT])
                open("%s", "w").write(str(os.getpid()))
                print("Full thread dump of a stand-in")
                print("\\n".join(str(i) for i in range(1, 20001)), flush=True)
                while True:
                    time.sleep(0.2)
                """.formatted(quits, pidFile));

        Result result = runAotTrain(Map.of("SYMMEM_AOT_TRAINING_TIMEOUT", "1"));

        assertThat(result.exitCode()).as("exit status; stderr: %s", result.stderr()).isZero();
        // Run from a JVM (as Maven runs it), whose children start with SIGQUIT blocked: the script's own
        // deadline must still act (1 s, the dump, the kill 5 s after TERM), not only timeout's backstop at 31 s.
        assertThat(result.took()).as("how long the script took").isLessThan(Duration.ofSeconds(25));
        assertThat(quits).as("SIGQUIT reached the training run").exists();
        assertThat(result.stderr()).contains("did not end within 1 s and was stopped")
                .contains("Full thread dump of a stand-in").contains("\n399\n").doesNotContain("\n400\n");
        assertThat(app.resolve("app.aot")).doesNotExist();
        assertThat(app.resolve("app.aot.tmp")).doesNotExist();
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        assertThat(running(pid)).as("the training run (pid %d) runs on after the script ended", pid).isFalse();
    }

    @Test
    void aListenerThatNeverAnswersTheProbesDoesNotHoldTheScript() throws Exception {
        assumeTrue(Tools.present("bash") && Tools.present("timeout") && Tools.present("python3"),
                "bash, timeout or python3 is missing: the silent listener cannot be played here");
        Path listenerPid = root.resolve("listener.pid");
        Path accepted = root.resolve("accepted");
        // The training run leaves a process of its own on the management port that accepts every probe and
        // answers none (a stranger holding the port looks the same); once a probe is held there, the run
        // writes its cache and ends well.
        fakeJava("""
                setsid python3 -c '
                import socket, sys, time
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", int(sys.argv[1])))
                s.listen(64)
                s.settimeout(1)
                held, end = [], time.time() + 120
                while time.time() < end:
                    try:
                        held.append(s.accept())
                        open(sys.argv[2], "w").close()
                    except socket.timeout:
                        pass
                ' "$SYMMEM_MANAGEMENT_PORT" %s </dev/null >/dev/null 2>&1 &
                echo $! > %s
                for _ in $(seq 1 300); do [ -f %s ] && break; sleep 0.1; done
                for arg in "$@"; do
                  case "$arg" in -XX:AOTCacheOutput=*) echo cache > "${arg#-XX:AOTCacheOutput=}" ;; esac
                done
                """.formatted(accepted, listenerPid, accepted));
        try {
            Result result = runAotTrain(Map.of());

            assertThat(accepted).as("a probe reached the silent listener").exists();
            assertThat(result.exitCode()).as("exit status; stderr: %s", result.stderr()).isZero();
            assertThat(result.stderr()).contains("AOT cache").contains("made on Java 25.0.9");
            assertThat(app.resolve("app.aot")).hasContent("cache");
            assertThat(app.resolve("app.aot.java")).hasContent("25.0.9");
        } finally {
            if (Files.exists(listenerPid)) {
                ProcessHandle.of(Long.parseLong(Files.readString(listenerPid).strip())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void aTrainingRunThatEndsWellWithoutACacheLeavesNoneAndSaysSo() throws Exception {
        assumeTrue(Tools.present("bash") && Tools.present("timeout"), "bash or timeout is missing: bin/aot-train cannot run here");
        Files.writeString(app.resolve("app.aot"), "a cache of an earlier build");
        fakeJava("echo 'the JVM that writes the cache failed'\nexit 0\n");

        Result result = runAotTrain(Map.of());

        assertThat(result.exitCode()).as("exit status; stderr: %s", result.stderr()).isZero();
        assertThat(result.stderr()).contains("ended but wrote no cache");
        assertThat(app.resolve("app.aot")).as("the earlier build's cache").doesNotExist();
    }

    @Test
    void aTimeoutThatIsNotAWholeNumberOfSecondsIsNamed() throws Exception {
        assumeTrue(Tools.present("bash"), "bash is missing: bin/aot-train cannot run here");
        fakeJava("exit 0\n");

        Result result = runAotTrain(Map.of("SYMMEM_AOT_TRAINING_TIMEOUT", "3m"));

        assertThat(result.exitCode()).isEqualTo(2);
        assertThat(result.stderr()).contains("SYMMEM_AOT_TRAINING_TIMEOUT=3m is invalid");
    }

    /**
     * Whether a process runs; a zombie does not (killed, it waits to be reaped by whoever inherited it, which
     * in a container's init may be never, and ProcessHandle counts it as alive).
     */
    private static boolean running(long pid) throws IOException {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String s = Files.readString(stat);
            return s.charAt(s.lastIndexOf(')') + 2) != 'Z';
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    private void fakeJava(String body) throws IOException {
        fakeJava("#!/usr/bin/env bash", body);
    }

    private void fakeJava(String shebang, String body) throws IOException {
        Files.writeString(javaBin, shebang + "\n" + body);
        Files.setPosixFilePermissions(javaBin, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private record Result(int exitCode, String stderr, Duration took) {
    }

    private Result runAotTrain(Map<String, String> extraEnv) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(root.resolve("bin/aot-train").toString());
        pb.environment().keySet().removeIf(k -> k.startsWith("SYMMEM_"));
        pb.environment().put("SYMMEM_JAVA", javaBin.toString());
        pb.environment().putAll(extraEnv);
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        Path stderr = root.resolve("aot-train.err");
        pb.redirectError(stderr.toFile());
        long start = System.nanoTime();
        Process p = pb.start();
        boolean ended = p.waitFor(SCRIPT_LIMIT.toSeconds(), TimeUnit.SECONDS);
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        String err = Files.readString(stderr, StandardCharsets.UTF_8);
        assertThat(ended).as("bin/aot-train ended within %s; stderr so far: %s", SCRIPT_LIMIT, err).isTrue();
        return new Result(p.exitValue(), err, Duration.ofNanos(System.nanoTime() - start));
    }
}
