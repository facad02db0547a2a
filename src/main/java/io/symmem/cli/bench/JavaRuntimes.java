package io.symmem.cli.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Java runtimes of this machine, found as bin/java-select finds them (JAVA_HOME, the JVMs under
 * /usr/lib/jvm, java on PATH), each with its version from the runtime's release file; 17 and later.
 */
final class JavaRuntimes {
    private static final Pattern VERSION = Pattern.compile("^JAVA_VERSION=\"([^\"]+)\"", Pattern.MULTILINE);

    record Runtime(Path java, String version, int major) {
        /** The options that give this runtime a clean start (as bin/java-select sets them). */
        List<String> cleanStartFlags() {
            return major >= 24 ? List.of("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow") : List.of();
        }

        @Override
        public String toString() {
            return "Java " + version;
        }
    }

    private JavaRuntimes() {
    }

    /**
     * This JVM's release and JIT, e.g. "Java 17, JIT C1": ranks run C1 only unless SYMMEM_JAVA_OPTS says otherwise
     * (bin/java-select), and a per-call cost measured under C1 is not C2's. The last TieredStopAtLevel wins, as in the JVM.
     */
    static String thisJvm() {
        List<String> flags = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        String jit = flags.contains("-XX:-TieredCompilation") ? "C2" : "C1 + C2 (tiered)";
        for (String f : flags) {
            if (f.startsWith("-XX:TieredStopAtLevel=")) {
                String level = f.substring(f.indexOf('=') + 1);
                jit = level.equals("0") ? "none (interpreter)" : level.equals("4") ? "C1 + C2 (tiered)" : "C1 (level " + level + ")";
            }
        }
        return "Java " + java.lang.Runtime.version().feature() + ", JIT " + jit;
    }

    static List<Runtime> find() {
        List<Path> candidates = new ArrayList<>();
        String javaHome = System.getenv("JAVA_HOME");
        if (javaHome != null) {
            candidates.add(Path.of(javaHome, "bin", "java"));
        }
        try (DirectoryStream<Path> jvms = Files.newDirectoryStream(Path.of("/usr/lib/jvm"))) {
            jvms.forEach(dir -> candidates.add(dir.resolve("bin/java")));
        } catch (IOException | RuntimeException none) {
            // no /usr/lib/jvm on this machine
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            candidates.add(Path.of(dir.isEmpty() ? "." : dir, "java"));
        }
        candidates.add(Path.of(System.getProperty("java.home"), "bin", "java"));
        Map<Path, Runtime> found = new LinkedHashMap<>();
        for (Path c : candidates) {
            of(c).ifPresent(r -> found.putIfAbsent(r.java(), r));
        }
        return found.values().stream().filter(r -> r.major() >= 17).sorted((a, b) -> Integer.compare(a.major(), b.major())).toList();
    }

    static Optional<Runtime> of(Path java) {
        try {
            if (!Files.isExecutable(java)) {
                return Optional.empty();
            }
            Path real = java.toRealPath();
            Matcher m = VERSION.matcher(Files.readString(real.getParent().getParent().resolve("release")));
            if (!m.find()) {
                return Optional.empty();
            }
            String version = m.group(1);
            String major = version.startsWith("1.") ? version.substring(2, 3) : version.split("[.+-]")[0];
            return Optional.of(new Runtime(real, version, Integer.parseInt(major)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
