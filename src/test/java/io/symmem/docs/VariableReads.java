package io.symmem.docs;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The environment variables the product's code reads by name: a string literal handed to an
 * environment lookup. Java (src/main/java): {@code System.getenv("X")}, {@code getenv().get("X")},
 * {@code env.get("X")} / {@code getOrDefault} / {@code containsKey} on a map called env, a helper
 * called with {@code (env, "X")}, {@code NativeNvshmem.getenv("X")} and picocli's {@code ${env:X}}
 * defaults. Native (src/native-cuda/src and include; its tests and benchmarks are tooling, not the
 * library): any call whose name holds "env" ({@code getenv}, {@code env_flag}) with a literal.
 * Variables reached through a constant or a table (ConfigVariable, the native tunables) are not
 * found here: the generated table lists those from the same constants.
 */
final class VariableReads {
    private static final String NAME = "([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)";
    private static final Pattern JAVA_READ = Pattern.compile("(?:getenv\\(|getenv\\(\\)\\.(?:get|getOrDefault|containsKey)\\("
            + "|\\benv\\.(?:get|getOrDefault|containsKey)\\(|\\w\\(env,\\s*)\"" + NAME + "\"|\\$\\{env:" + NAME + "\\b");
    private static final Pattern NATIVE_READ = Pattern.compile("\\b\\w*env\\w*\\(\\s*\"" + NAME + "\"");

    /** One read: the source file and line, and the variable. */
    record Read(Path file, int line, String variable) {
        @Override
        public String toString() {
            return file + ":" + line + " reads " + variable;
        }
    }

    private VariableReads() {
    }

    static List<Read> ofTheProduct() {
        List<Read> reads = new ArrayList<>();
        for (Path java : ProjectFiles.under(Path.of("src/main/java"), ".java")) {
            reads.addAll(in(java, ProjectFiles.text(java), JAVA_READ));
        }
        for (Path root : List.of(Path.of("src/native-cuda/src"), Path.of("src/native-cuda/include"))) {
            for (Path source : ProjectFiles.under(root, ".h", ".cpp", ".cu", ".cuh")) {
                reads.addAll(in(source, ProjectFiles.text(source), NATIVE_READ));
            }
        }
        return reads;
    }

    static List<Read> javaReads(Path file, String text) {
        return in(file, text, JAVA_READ);
    }

    static List<Read> nativeReads(Path file, String text) {
        return in(file, text, NATIVE_READ);
    }

    private static List<Read> in(Path file, String text, Pattern read) {
        List<Read> reads = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            Matcher m = read.matcher(lines[i]);
            while (m.find()) {
                String name = m.group(1) != null ? m.group(1) : m.groupCount() > 1 ? m.group(2) : null;
                if (name != null) {
                    reads.add(new Read(file, i + 1, name));
                }
            }
        }
        return reads;
    }
}
