package io.symmem.cli.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code symmem bench startup}: how fast ranks start, per Java runtime found and with and without the
 * AOT cache. For each configuration and world size it starts that many `serve` ranks at once (rank 0
 * hosting the store) and times, per rank, from its process start to its management port answering
 * /q/health/live (up: Quarkus has booted) and /q/health/ready (joined: the world rendezvous is done);
 * then the wall time of {@code launch -n 4 demo}. Min, median and max over the runs. Where the
 * application runs from a checkout, also what a user waits for: from the {@code bin/symmem serve} command
 * (the wrapper picks the runtime and the cache) to /q/health/ready 200 in a world of one, side by side
 * with a plain {@code java -jar} of the same build on the oldest runtime found (Java 17).
 */
@Command(name = "startup", description = "Start-up time of ranks (process start to /q/health/live and to /q/health/ready) and of "
        + "`launch -n 4 demo`, per Java runtime found (JAVA_HOME, /usr/lib/jvm, PATH) with and without the AOT cache.")
public class StartupBenchCommand implements Callable<Integer> {
    @Option(names = "--ranks", split = ",", defaultValue = "1,4", description = "World sizes (default ${DEFAULT-VALUE}).")
    List<Integer> worldSizes;

    @Option(names = "--runs", defaultValue = "5", description = "Runs per configuration (default ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--demo-runs", defaultValue = "3", description = "Runs of `launch -n 4 demo` per configuration, 0 for none "
            + "(default ${DEFAULT-VALUE}).")
    int demoRuns;

    @Option(names = "--java", split = ",", description = "Java binaries to compare instead of those found.")
    List<Path> javas;

    @Option(names = "--wrapper-runs", defaultValue = "5", description = "Runs of `bin/symmem serve` to ready, beside as many "
            + "of a plain `java -jar` on the oldest runtime, 0 for none (default ${DEFAULT-VALUE}).")
    int wrapperRuns;

    /**
     * One way of starting the application: a runtime, and the AOT cache or not. With the cache, the options it
     * was made with ({@code app.aot.cmd}, as bin/symmem starts it); without, the runtime's own clean start.
     */
    record Setup(JavaRuntimes.Runtime runtime, Path aotCache, List<String> cacheFlags) {
        Setup(JavaRuntimes.Runtime runtime) {
            this(runtime, null, List.of());
        }

        List<String> javaCommand(Path jar) {
            List<String> command = new ArrayList<>(List.of(runtime.java().toString()));
            command.addAll(aotCache != null ? cacheFlags : runtime.cleanStartFlags());
            if (aotCache != null) {
                command.add("-XX:AOTCache=" + aotCache);
            }
            command.addAll(List.of("-jar", jar.toString()));
            return command;
        }

        String label() {
            return runtime + (aotCache != null ? ", AOT cache" : runtime.major() >= 25 ? ", no cache" : "");
        }
    }

    @Override
    public Integer call() throws Exception {
        Path jar = Path.of(System.getProperty("java.class.path"));
        if (!jar.getFileName().toString().equals("quarkus-run.jar")) {
            System.err.println("symmem bench startup: run it from the packaged application (bin/symmem), not from " + jar);
            return 2;
        }
        List<JavaRuntimes.Runtime> runtimes = javas == null ? JavaRuntimes.find()
                : javas.stream().map(j -> JavaRuntimes.of(j).orElseThrow(() -> new IllegalArgumentException(
                        "--java " + j + ": not a Java runtime of release 17 or later"))).toList();
        List<Setup> setups = new ArrayList<>();
        Path aot = jar.resolveSibling("app.aot");
        String aotVersion = Files.exists(aot.resolveSibling("app.aot.java"))
                ? Files.readString(aot.resolveSibling("app.aot.java")).trim() : "";
        Path aotCommand = aot.resolveSibling("app.aot.cmd");
        List<String> cacheFlags = Files.exists(aotCommand) ? Files.readAllLines(aotCommand).stream().skip(1).toList() : List.of();
        for (JavaRuntimes.Runtime r : runtimes) {
            setups.add(new Setup(r));
            if (r.major() >= 25 && Files.exists(aot) && aotVersion.equals(r.version())) {
                setups.add(new Setup(r, aot, cacheFlags));
            } else if (r.major() >= 25) {
                System.out.println("symmem bench startup: no AOT cache for " + r + " (" + aot + " is "
                        + (Files.exists(aot) ? "for Java " + aotVersion : "missing: bin/aot-train makes it") + ")");
            }
        }
        System.out.printf(Locale.ROOT, "symmem bench startup: %d run(s) each, %d CPUs, load average %.2f; ms from process start%n",
                runs, Runtime.getRuntime().availableProcessors(), java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        .getSystemLoadAverage());
        if (!cacheFlags.isEmpty()) {
            System.out.println("symmem bench startup: with the AOT cache, the options it was made with (app.aot.cmd): "
                    + String.join(" ", cacheFlags));
        }
        System.out.printf(Locale.ROOT, "%-28s %5s  %-20s %-20s%n", "runtime", "ranks", "up min/med/max", "joined min/med/max");
        for (Setup setup : setups) {
            for (int n : worldSizes) {
                List<Long> up = new ArrayList<>();
                List<Long> joined = new ArrayList<>();
                for (int run = 0; run < runs; run++) {
                    long[][] times = startWorld(setup.label(), setup.javaCommand(jar), n);
                    for (long[] t : times) {
                        up.add(t[0]);
                        joined.add(t[1]);
                    }
                }
                System.out.printf(Locale.ROOT, "%-28s %5d  %-20s %-20s%n", setup.label(), n, spread(up), spread(joined));
            }
        }
        Path wrapper = jar.toAbsolutePath().getParent().getParent().getParent().resolve("bin").resolve("symmem");
        if (wrapperRuns > 0 && Files.isExecutable(wrapper)) {
            compareWrapper(wrapper, new Setup(runtimes.stream().min(java.util.Comparator.comparingInt(JavaRuntimes.Runtime::major))
                    .orElseThrow()), jar);
        }
        if (demoRuns > 0) {
            System.out.printf(Locale.ROOT, "%n%-28s  %s%n", "runtime", "launch -n 4 demo, ms min/med/max");
            for (Setup setup : setups) {
                List<Long> walls = new ArrayList<>();
                for (int run = 0; run < demoRuns; run++) {
                    walls.add(demo(setup, jar));
                }
                System.out.printf(Locale.ROOT, "%-28s  %s%n", setup.label(), spread(walls));
            }
        }
        return 0;
    }

    /**
     * {@code bin/symmem serve} and a plain {@code java -jar} of the same build on {@code plain}'s runtime, in
     * turn, each in a world of one: ms from the command to /q/health/ready 200, and the ratio of the medians.
     */
    private void compareWrapper(Path wrapper, Setup plain, Path jar) throws Exception {
        List<Long> viaWrapper = new ArrayList<>();
        List<Long> viaJava = new ArrayList<>();
        for (int run = 0; run < wrapperRuns; run++) {
            viaWrapper.add(startWorld("bin/symmem serve", List.of(wrapper.toString()), 1)[0][1]);
            viaJava.add(startWorld(plain.label(), plain.javaCommand(jar), 1)[0][1]);
        }
        System.out.printf(Locale.ROOT, "%n%-28s  %s%n", "command (WORLD_SIZE=1)", "command to /q/health/ready 200, ms min/med/max");
        System.out.printf(Locale.ROOT, "%-28s  %s%n", "bin/symmem serve", spread(viaWrapper));
        System.out.printf(Locale.ROOT, "%-28s  %s%n", "java -jar, " + plain.label(), spread(viaJava));
        System.out.printf(Locale.ROOT, "%-28s  %.2f%n", "ratio of the medians", (double) median(viaWrapper) / median(viaJava));
    }

    /** Starts {@code n} ranks of {@code command} serve at once; per rank, ms from its start to up and to joined. */
    private long[][] startWorld(String label, List<String> command, int n) throws Exception {
        int store = freeBlock(1, 0);
        int http = freeBlock(n, store);
        int management = freeBlock(n, http + n);
        List<Process> ranks = new ArrayList<>();
        long[] started = new long[n];
        long[][] times = new long[n][2];
        try {
            for (int r = 0; r < n; r++) {
                ProcessBuilder b = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD);
                b.command().add("serve");
                Map<String, String> env = b.environment();
                env.keySet().removeIf(k -> k.startsWith("SYMMEM_") || k.equals("RANK") || k.equals("WORLD_SIZE")
                        || k.equals("LOCAL_RANK") || k.equals("LOCAL_WORLD_SIZE"));
                env.putAll(Map.of("WORLD_SIZE", Integer.toString(n), "RANK", Integer.toString(r), "LOCAL_RANK", Integer.toString(r),
                        "LOCAL_WORLD_SIZE", Integer.toString(n), "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(store),
                        "SYMMEM_HTTP_PORT", Integer.toString(http), "SYMMEM_MANAGEMENT_PORT", Integer.toString(management),
                        "SYMMEM_BACKEND", "host"));
                started[r] = System.nanoTime();
                ranks.add(b.start());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            boolean[] up = new boolean[n];
            boolean[] joined = new boolean[n];
            int left = n;
            while (left > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(label + ": a rank of " + n + " did not become ready within 120 s");
                }
                for (int r = 0; r < n; r++) {
                    if (!up[r] && status(management + r, "/q/health/live") == 200) {
                        up[r] = true;
                        times[r][0] = (System.nanoTime() - started[r]) / 1_000_000;
                    }
                    if (up[r] && !joined[r] && status(management + r, "/q/health/ready") == 200) {
                        joined[r] = true;
                        times[r][1] = (System.nanoTime() - started[r]) / 1_000_000;
                        left--;
                    }
                    if (!ranks.get(r).isAlive()) {
                        throw new IllegalStateException(label + ": rank " + r + " exited with " + ranks.get(r).exitValue());
                    }
                }
                Thread.sleep(5);
            }
            return times;
        } finally {
            ranks.forEach(Process::destroy);
            for (Process p : ranks) {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private long demo(Setup setup, Path jar) throws Exception {
        ProcessBuilder b = new ProcessBuilder(setup.javaCommand(jar)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        b.command().addAll(List.of("launch", "-n", "4", "demo", "--sizes", "4KiB,1MiB", "--min-time-ms", "50"));
        b.environment().keySet().removeIf(k -> k.startsWith("SYMMEM_"));
        b.environment().put("SYMMEM_HTTP_PORT", Integer.toString(freeBlock(4, 0)));
        b.environment().put("MASTER_PORT", "0");
        b.environment().put("SYMMEM_MANAGEMENT_PORT", "0");
        long t0 = System.nanoTime();
        Process p = b.start();
        if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(setup.label() + ": launch -n 4 demo failed");
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** The status of a GET on 127.0.0.1:port, or -1 while nothing answers there. */
    private static int status(int port, String path) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(2000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] head = s.getInputStream().readNBytes(12);
            String line = new String(head, StandardCharsets.US_ASCII);
            return line.startsWith("HTTP/1.1 ") ? Integer.parseInt(line.substring(9, 12)) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The first of {@code n} consecutive free ports above {@code after} (rank r of a world uses base + r),
     * below Linux's ephemeral range (32768 up), from which the ranks' own outgoing connections take ports.
     */
    private static int freeBlock(int n, int after) throws IOException {
        for (int base = Math.max(after + 1, 20000 + (int) (Math.random() * 10000)); base + n < 32768; base += n) {
            boolean free = true;
            for (int p = base; p < base + n && free; p++) {
                try (java.net.ServerSocket s = new java.net.ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                    free = s.getLocalPort() == p;
                } catch (IOException taken) {
                    free = false;
                }
            }
            if (free) {
                return base;
            }
        }
        throw new IOException("no " + n + " consecutive free ports");
    }

    private static long median(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).sorted().toArray()[values.size() / 2];
    }

    private static String spread(List<Long> values) {
        long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
        return sorted[0] + " / " + sorted[sorted.length / 2] + " / " + sorted[sorted.length - 1];
    }
}
