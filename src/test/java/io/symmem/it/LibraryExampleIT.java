package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * symmem as a plain Java program uses it: docs/library.md's example is compiled (javac of this JDK)
 * against the jar `mvn install` installs plus the class path Maven gives a project depending on it,
 * then run as two ranks, each in its own JVM without Quarkus, on the host backend.
 */
class LibraryExampleIT {
    private static final Path DOC = Path.of("docs", "library.md");

    @Test
    void theDocumentedExampleRunsOnTwoRanks() throws Exception {
        String source = firstJavaBlock(Files.readString(DOC));
        Path dir = compile(source);
        String classPath = dir + File.pathSeparator + libraryClassPath();
        String mainClass = className(source);
        int store = Ports.free();
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ranks.add(RankProcess.startClass("example" + r, env(r, store, Map.of()), classPath, mainClass));
            }
            for (int r = 0; r < 2; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(120);
                String all = p.output() + p.errors();
                assertThat(code).as(all).isZero();
                // Inputs {rank, 1, 2, 3} on ranks 0 and 1: the sums are {1, 2, 4, 6} on both.
                assertThat(p.output()).as(all).contains("rank " + r + " of 2 (host): [1.0, 2.0, 4.0, 6.0]");
                assertThat(all).as(all).doesNotContain("SLF4J").doesNotContain("Exception");
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void aPlainProgramPrintsNoLogManagerComplaintAndStillShowsItsLogs() throws Exception {
        // The JDK's System.getLogger goes to the JBoss LogManager's finder, which complains on stderr
        // when java.util.logging runs on another manager (as the nvshmem backend's logging made it).
        String source = """
                import io.symmem.*;

                public class LogsAfterJoining {
                    public static void main(String[] args) {
                        try (SymmemWorld world = Symmem.fromEnvironment()) {
                            org.jboss.logging.Logger.getLogger("example").info("jboss logging after joining");
                            org.jboss.logging.Logger.getLogger("example").debug("jboss debug stays hidden");
                            System.getLogger("example").log(System.Logger.Level.WARNING, "system logger after joining");
                            System.out.println("JOINED " + world.rank());
                        }
                    }
                }
                """;
        Path dir = compile(source);
        String classPath = dir + File.pathSeparator + libraryClassPath();
        int store = Ports.free();
        Map<String, String> env = new java.util.HashMap<>(env(0, store, Map.of()));
        env.put("WORLD_SIZE", "1");
        try (RankProcess p = RankProcess.startClass("logs", env, classPath, "LogsAfterJoining")) {
            int code = p.exitCode(120);
            String all = p.output() + p.errors();
            assertThat(code).as(all).isZero();
            assertThat(p.output()).as(all).contains("JOINED 0");
            assertThat(all).as(all).doesNotContain("LogManager accessed").doesNotContain("ERROR")
                    .contains("jboss logging after joining").contains("system logger after joining")
                    .doesNotContain("jboss debug stays hidden");
        }
    }

    @Test
    void aPeerKilledDuringABarrierFailsItAtOnceNamingThePeer() throws Exception {
        // Deadlines of minutes: only liveness can end the barrier within the bound below.
        String source = """
                import io.symmem.*;
                import java.time.Duration;

                public class BarrierUntilPeerDies {
                    public static void main(String[] args) throws Exception {
                        try (SymmemWorld world = Symmem.fromEnvironment()) {
                            System.out.println("JOINED " + world.rank());
                            if (world.rank() == 1) {
                                Thread.sleep(600_000);  // killed by the test
                            }
                            long start = System.nanoTime();
                            try {
                                world.group().barrier(Duration.ofMinutes(5));
                                System.out.println("BARRIER PASSED");
                            } catch (RuntimeException e) {
                                System.out.println("BARRIER FAILED after " + (System.nanoTime() - start) / 1_000_000
                                        + " ms: " + e.getMessage());
                                System.out.println("FAILURE " + world.failure().map(f -> f.ranks().toString()).orElse("none"));
                            }
                        }
                    }
                }
                """;
        Path dir = compile(source);
        String classPath = dir + File.pathSeparator + libraryClassPath();
        int store = Ports.free();
        Map<String, String> longDeadlines = Map.of("SYMMEM_TIMEOUT_STORE", "300s", "SYMMEM_TIMEOUT_RENDEZVOUS", "300s",
                "SYMMEM_TIMEOUT_BARRIER", "300s");
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ranks.add(RankProcess.startClass("barrier" + r, env(r, store, longDeadlines), classPath, "BarrierUntilPeerDies"));
            }
            ranks.get(0).awaitOutput("JOINED 0", 120);
            ranks.get(1).awaitOutput("JOINED 1", 120);
            Thread.sleep(500);  // rank 0 is in its barrier by now (or soon: either way it must notice)
            ranks.get(1).kill();
            RankProcess survivor = ranks.get(0);
            int code = survivor.exitCode(60);
            String all = survivor.output() + survivor.errors();
            assertThat(code).as(all).isZero();
            assertThat(survivor.output()).as(all).containsPattern("BARRIER FAILED after \\d+ ms: .*rank 1")
                    .contains("FAILURE [1]");
            Matcher elapsed = Pattern.compile("BARRIER FAILED after (\\d+) ms").matcher(survivor.output());
            assertThat(elapsed.find()).isTrue();
            assertThat(Long.parseLong(elapsed.group(1))).as(all).isLessThan(30_000);
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void aWorldThatLostARankFormsAgainWithTheRestartedRank() throws Exception {
        // Each rank adds rank + 1 to every element: the sum is 6 on every step of every generation. A rank
        // counts the steps of its current generation only, so all three end together in the last one.
        String source = """
                import io.symmem.*;
                import io.symmem.collective.*;
                import io.symmem.liveness.PeerLostException;
                import io.symmem.nativ.NativeException;

                public class FormAgainOnLoss {
                    public static void main(String[] args) throws Exception {
                        int steps = Integer.parseInt(args[0]);
                        try (SymmemWorld world = Symmem.fromEnvironment()) {
                            SymmemGroup group = world.group();
                            SymmetricBuffer buffer = group.allocate(DType.FLOAT32, 4);
                            float mine = world.rank() + 1;
                            int done = 0;
                            while (done < steps) {
                                try {
                                    buffer.write(new float[] {mine, mine, mine, mine});
                                    group.allReduce(buffer, ReduceOp.SUM);
                                    float[] sum = new float[4];
                                    buffer.read(sum);
                                    for (float v : sum) {
                                        if (v != 6f) {
                                            throw new AssertionError("step " + done + ": " + java.util.Arrays.toString(sum));
                                        }
                                    }
                                    done++;
                                    if (done == 5) {
                                        System.out.println("STEPPING " + world.rank() + " generation " + world.generation());
                                    }
                                    Thread.sleep(10);
                                } catch (PeerLostException | NativeException failed) {
                                    // A rank is gone (or a peer gave this collective up because it saw that first).
                                    System.out.println("FAILED " + failed.getMessage());
                                    world.formAgain();
                                    try {
                                        group.allReduce(buffer, ReduceOp.SUM);
                                    } catch (GenerationLostException old) {
                                        System.out.println("OLD GROUP: " + old.getMessage());
                                    }
                                    group = world.group();
                                    buffer = group.allocate(DType.FLOAT32, 4);
                                    done = 0;
                                }
                            }
                            System.out.println("DONE " + world.rank() + " generation " + world.generation());
                        }
                    }
                }
                """;
        Path dir = compile(source);
        String classPath = dir + File.pathSeparator + libraryClassPath();
        int store = Ports.free();
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                ranks.add(RankProcess.startClass("reform" + r, world3(r, store), classPath, "FormAgainOnLoss", "300"));
            }
            for (int r = 0; r < 3; r++) {
                ranks.get(r).awaitOutput("STEPPING " + r + " generation 0", 120);
            }
            ranks.get(2).kill();
            ranks.set(2, RankProcess.startClass("reform2-again", world3(2, store), classPath, "FormAgainOnLoss", "300"));
            for (int r = 0; r < 3; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(120);
                StringBuilder every = new StringBuilder();
                for (int o = 0; o < 3; o++) {
                    every.append("---- rank ").append(o).append('\n').append(ranks.get(o).output()).append(ranks.get(o).errors());
                }
                String all = every.toString();
                assertThat(code).as(all).isZero();
                assertThat(p.output()).as(all).contains("DONE " + r + " generation 1");
                if (r < 2) {
                    assertThat(p.output()).as(all).containsPattern("FAILED .*rank 2")
                            .containsPattern("OLD GROUP: group 'world': generation 0 of the world was lost \\(.*\\): make it again");
                }
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void theShuffleExampleMovesEveryRecordToItsOwnerOnFourRanks() throws Exception {
        String source = Files.readString(Path.of("docs", "examples", "library", "src", "main", "java", "ShuffleExample.java"));
        Path dir = compile(source);
        String classPath = dir + File.pathSeparator + libraryClassPath();
        int store = Ports.free();
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 4; r++) {
                Map<String, String> env = env(r, store, Map.of());
                env.put("WORLD_SIZE", "4");
                ranks.add(RankProcess.startClass("shuffle" + r, env, classPath, "ShuffleExample"));
            }
            long sent = 0;
            long received = 0;
            Pattern line = Pattern.compile("rank (\\d) of 4: sent (\\d+) records, received (\\d+) .* (\\d+) keys checked: ok");
            for (int r = 0; r < 4; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(120);
                String all = p.output() + p.errors();
                assertThat(code).as(all).isZero();
                Matcher m = line.matcher(p.output());
                assertThat(m.find()).as(all).isTrue();
                assertThat(m.group(1)).isEqualTo(Integer.toString(r));
                assertThat(m.group(4)).as("64 keys, every 4th owned by rank " + r).isEqualTo("16");
                sent += Long.parseLong(m.group(2));
                received += Long.parseLong(m.group(3));
            }
            // Every record arrived exactly once somewhere (and each owner's sums were checked above).
            assertThat(received).isEqualTo(sent).isGreaterThan(1000);
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    private static Map<String, String> world3(int rank, int store) {
        Map<String, String> env = env(rank, store, Map.of());
        env.put("WORLD_SIZE", "3");
        return env;
    }

    private static Map<String, String> env(int rank, int store, Map<String, String> extra) {
        Map<String, String> env = new java.util.HashMap<>(extra);
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", "2");
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(store));
        env.put("SYMMEM_BACKEND", "host");
        return env;
    }

    /** The packaged jar and its compile and runtime dependencies, as failsafe was told them (pom.xml). */
    static String libraryClassPath() {
        Path jar = Path.of(System.getProperty("symmem.library.jar", "target/symmem-0.1.0-SNAPSHOT.jar"));
        assertThat(jar).as("the packaged library jar (run mvn verify)").exists();
        String listed = System.getProperty("symmem.library.classpath", "");
        int open = listed.indexOf('[');
        assertThat(open).as("symmem.library.classpath from pom.xml: " + listed).isNotNegative();
        List<String> entries = Arrays.stream(listed.substring(open + 1, listed.lastIndexOf(']')).split(", "))
                .map(String::trim)
                // target/classes stands for what the jar holds: the jar itself replaces it.
                .filter(e -> !Path.of(e).endsWith(Path.of("target", "classes")))
                .collect(Collectors.toCollection(ArrayList::new));
        assertThat(entries).as("runtime dependencies").isNotEmpty();
        assertThat(entries).noneMatch(e -> e.contains("quarkus-junit5") || e.contains("junit-jupiter"));
        entries.add(0, jar.toAbsolutePath().toString());
        return String.join(File.pathSeparator, entries);
    }

    private static String firstJavaBlock(String markdown) {
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
        assertThat(m.find()).as("a ```java block in " + DOC).isTrue();
        return m.group(1);
    }

    private static String className(String source) {
        Matcher m = Pattern.compile("public class (\\w+)").matcher(source);
        assertThat(m.find()).as("a public class in:\n" + source).isTrue();
        return m.group(1);
    }

    /** Compiles {@code source} against the library's class path into a fresh directory. */
    private static Path compile(String source) throws IOException {
        Path dir = Files.createTempDirectory("symmem-library-example");
        Path file = dir.resolve(className(source) + ".java");
        Files.writeString(file, source);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler").isNotNull();
        StringWriter diagnostics = new StringWriter();
        boolean ok = javac.getTask(diagnostics, null, null,
                List.of("--release", "17", "-classpath", libraryClassPath(), "-d", dir.toString()), null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(file.toFile())).call();
        assertThat(ok).as("javac:\n" + diagnostics).isTrue();
        return dir;
    }
}
