package io.symmem.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The names the native core and its build define: the identifiers of the public C headers
 * (functions, types, enum constants, macros; comments left out, so a name only mentioned there does
 * not count), the C++ classes and structs of its sources, the programs its CMake files build, and the
 * Prometheus names of the metrics the Java side registers (Micrometer's "symmem.pool.segments" is
 * scraped as symmem_pool_segments; counters also as ..._total).
 */
final class NativeNames {
    private static final Path INCLUDE = Path.of("src/native-cuda/include");
    private static final Path NATIVE = Path.of("src/native-cuda");
    private static final Path MAIN_JAVA = Path.of("src/main/java");
    private static final Pattern COMMENTS = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);
    private static final Pattern C_IDENTIFIER = Pattern.compile("\\b(?:symmem|SYMMEM)_\\w+");
    private static final Pattern CPP_TYPE = Pattern.compile("\\b(?:class|struct|enum class|enum|using)\\s+([A-Z]\\w*)");
    private static final Pattern EXECUTABLE = Pattern.compile("add_executable\\(\\s*(\\w+)");
    private static final Pattern METRIC = Pattern.compile("\"(symmem(?:\\.[a-z0-9]+)+)\"");

    private final Set<String> headerNames = new HashSet<>();
    private final Set<String> cppTypes = new HashSet<>();
    private final Set<String> programs = new HashSet<>();
    private final Set<String> metrics = new HashSet<>();

    private NativeNames() {
    }

    static NativeNames read() {
        NativeNames names = new NativeNames();
        for (Path header : files(INCLUDE, ".h")) {
            collect(C_IDENTIFIER, 0, COMMENTS.matcher(text(header)).replaceAll(" "), names.headerNames);
        }
        for (Path source : files(NATIVE.resolve("src"), ".h", ".cpp", ".cu", ".cuh")) {
            collect(CPP_TYPE, 1, text(source), names.cppTypes);
        }
        for (Path cmake : files(NATIVE, "CMakeLists.txt")) {
            collect(EXECUTABLE, 1, text(cmake), names.programs);
        }
        Set<String> dotted = new HashSet<>();
        for (Path java : files(MAIN_JAVA, ".java")) {
            collect(METRIC, 1, text(java), dotted);
        }
        for (String name : dotted) {
            names.metrics.add(name.replace('.', '_'));
            names.metrics.add(name.replace('.', '_') + "_total");
        }
        return names;
    }

    /** Declared in a public header (symmem_* or SYMMEM_*). */
    boolean isHeaderName(String name) {
        return headerNames.contains(name);
    }

    /** Some header name starts with this prefix (for mentions such as symmem_graph_*). */
    boolean isHeaderPrefix(String prefix) {
        return headerNames.stream().anyMatch(n -> n.startsWith(prefix));
    }

    boolean isCppType(String name) {
        return cppTypes.contains(name);
    }

    boolean isProgram(String name) {
        return programs.contains(name);
    }

    boolean isMetric(String name) {
        return metrics.contains(name);
    }

    private static void collect(Pattern pattern, int group, String text, Set<String> into) {
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            into.add(m.group(group));
        }
    }

    static List<Path> files(Path root, String... endings) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(Files::isRegularFile)
                    .filter(p -> Stream.of(endings).anyMatch(e -> p.getFileName().toString().endsWith(e)))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String text(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
