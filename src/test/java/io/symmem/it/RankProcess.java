package io.symmem.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One process of the packaged application (target/quarkus-app), or of a program using the library jar,
 * started the way a user starts it,
 * with its own environment; stdout and stderr go to a file that the test reads afterwards.
 */
final class RankProcess implements AutoCloseable {
    private final Process process;
    private final Path log;
    /** stderr, when kept apart from stdout ({@link #startSeparatingStderr}); null when they share {@link #log}. */
    private final Path errLog;
    private final String name;

    private RankProcess(String name, Process process, Path log, Path errLog) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.errLog = errLog;
    }

    static Path appJar() {
        Path jar = Path.of(System.getProperty("symmem.app.dir", "target/quarkus-app"), "quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException("packaged application missing: " + jar + " (run mvn verify)");
        }
        return jar;
    }

    static RankProcess start(String name, Map<String, String> env, String... args) throws IOException {
        return start(name, env, false, args);
    }

    /** As {@link #start}, with stderr in a file of its own ({@link #errors()}), for tests of what goes where. */
    static RankProcess startSeparatingStderr(String name, Map<String, String> env, String... args) throws IOException {
        return start(name, env, true, args);
    }

    private static RankProcess start(String name, Map<String, String> env, boolean separateStderr, String... args)
            throws IOException {
        List<String> command = new ArrayList<>(List.of("-jar", appJar().toString()));
        command.addAll(List.of(args));
        return startJava(name, env, separateStderr, command);
    }

    /** A JVM running {@code mainClass} from {@code classPath} (a program of a library user), stderr apart. */
    static RankProcess startClass(String name, Map<String, String> env, String classPath, String mainClass,
            String... args) throws IOException {
        List<String> javaArgs = new ArrayList<>(List.of("-cp", classPath, mainClass));
        javaArgs.addAll(List.of(args));
        return startJava(name, env, true, javaArgs);
    }

    private static RankProcess startJava(String name, Map<String, String> env, boolean separateStderr,
            List<String> javaArgs) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1"));
        command.addAll(javaArgs);
        Path log = Files.createTempFile("symmem-" + name + "-", ".log");
        Path errLog = separateStderr ? Files.createTempFile("symmem-" + name + "-", ".err") : null;
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(log.toFile());
        if (errLog != null) {
            builder.redirectError(errLog.toFile());
        } else {
            builder.redirectErrorStream(true);
        }
        // Only what the test sets: nothing of the surrounding run leaks in.
        for (String key : List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")) {
            builder.environment().remove(key);
        }
        builder.environment().keySet().removeIf(k -> k.startsWith("SYMMEM_") || k.startsWith("QUARKUS_"));
        builder.environment().putAll(env);
        // Health and metrics on free ports unless the test names them: ranks of tests that run at once never collide.
        builder.environment().putIfAbsent("SYMMEM_MANAGEMENT_PORT", "0");
        return new RankProcess(name, builder.start(), log, errLog);
    }

    /** Waits for the exit code; fails the test (and kills the process) past the deadline. */
    int exitCode(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(name + " still running after " + seconds + " s; output:\n" + output());
        }
        return process.exitValue();
    }

    /** Sends SIGTERM and waits for the exit code (a forced kill past the deadline fails the test). */
    int terminate(long seconds) throws InterruptedException {
        process.destroy();
        return exitCode(seconds);
    }

    /** Waits until the output contains {@code text}; fails the test with the output past the deadline. */
    void awaitOutput(String text, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!output().contains(text)) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                throw new AssertionError(name + " did not print \"" + text + "\" within " + seconds + " s; output:\n" + output());
            }
            Thread.sleep(50);
        }
    }

    /** SIGKILL, as a crash or an OOM killer would: no shutdown hook runs, the kernel closes its sockets. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** stdout, and stderr too unless it was kept apart. */
    String output() {
        return read(log);
    }

    /** stderr, for a process started with {@link #startSeparatingStderr}. */
    String errors() {
        if (errLog == null) {
            throw new IllegalStateException(name + " was started with stderr in its output");
        }
        return read(errLog);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "(no output: " + e.getMessage() + ")";
        }
    }

    @Override
    public void close() {
        // A launcher killed outright runs no shutdown hook: its ranks would outlive the test.
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(log);
            if (errLog != null) {
                Files.deleteIfExists(errLog);
            }
        } catch (InterruptedException | IOException e) {
            Thread.currentThread().interrupt();
        }
    }
}
