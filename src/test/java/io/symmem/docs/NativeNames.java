package io.symmem.docs;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
        for (Path header : ProjectFiles.under(INCLUDE, ".h")) {
            collect(C_IDENTIFIER, 0, COMMENTS.matcher(ProjectFiles.text(header)).replaceAll(" "), names.headerNames);
        }
        for (Path source : ProjectFiles.under(NATIVE.resolve("src"), ".h", ".cpp", ".cu", ".cuh")) {
            collect(CPP_TYPE, 1, ProjectFiles.text(source), names.cppTypes);
        }
        for (Path cmake : ProjectFiles.under(NATIVE, "CMakeLists.txt")) {
            collect(EXECUTABLE, 1, ProjectFiles.text(cmake), names.programs);
        }
        Set<String> dotted = new HashSet<>();
        for (Path java : ProjectFiles.under(MAIN_JAVA, ".java")) {
            collect(METRIC, 1, ProjectFiles.text(java), dotted);
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
}
