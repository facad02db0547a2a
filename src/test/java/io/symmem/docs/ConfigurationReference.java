package io.symmem.docs;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The variables docs/configuration.md documents: the first cell of each table row, {@code | `NAME` |}.
 * A name only mentioned in a sentence there is not documented.
 */
final class ConfigurationReference {
    static final Path PAGE = Path.of("docs/configuration.md");
    private static final Pattern ROW = Pattern.compile("(?m)^\\| `([A-Z][A-Z0-9_]*)` \\|");

    private ConfigurationReference() {
    }

    static Set<String> variables() {
        return variables(ProjectFiles.text(PAGE));
    }

    static Set<String> variables(String markdown) {
        Set<String> names = new LinkedHashSet<>();
        Matcher row = ROW.matcher(markdown);
        while (row.find()) {
            names.add(row.group(1));
        }
        return names;
    }

    /**
     * The files of the project's own tooling (launch scripts, GPU scripts, native tests and benchmarks,
     * Java tests): a variable one of them reads is documented beside the command that uses it, not in
     * the product's reference. This test's own package is left out, so that its examples vouch for nothing.
     */
    static List<Path> toolingFiles() {
        List<Path> files = new java.util.ArrayList<>();
        for (Path root : List.of(Path.of("bin"), Path.of("scripts"), Path.of("src/native-cuda/tests"), Path.of("src/test"))) {
            files.addAll(ProjectFiles.under(root, ""));
        }
        files.removeIf(p -> p.startsWith("src/test/java/io/symmem/docs"));
        return files;
    }
}
