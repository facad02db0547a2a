package io.symmem.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package map of docs/architecture.md, checked on the sources: each layer uses only itself and the
 * layers below it, so the library never leans on the Quarkus service and the service adapts the library,
 * never the reverse. Read from the sources (imports and fully qualified names in code), not from the
 * compiled classes, so that a failure names the file and the line to change.
 */
class LayeringTest {
    private static final Path MAIN = Path.of("src/main/java");

    /** Lowest first; a package belongs to the longest prefix listed (a sub-package to its parent's layer). */
    private static final List<List<String>> LAYERS = List.of(
            // Build tooling (the Kubernetes manifests): uses no other package of symmem.
            List.of("io.symmem.deploy"),
            List.of("io.symmem.nativ"),
            List.of("io.symmem.store"),
            List.of("io.symmem.config"),
            List.of("io.symmem.liveness"),
            // The device layer: buffers, collectives and the vendor libraries use one another's types.
            List.of("io.symmem.memory", "io.symmem.collective", "io.symmem.nccl", "io.symmem.nvshmem"),
            List.of("io.symmem.world"),
            List.of("io.symmem"),
            List.of("io.symmem.service"),
            List.of("io.symmem.cli.common"),
            List.of("io.symmem.cli.bench", "io.symmem.stress"),
            List.of("io.symmem.cli"));

    private static final int MAX_LINES = 500;

    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    /** A reference to a class of ours: its package (lower-case segments) before the class name. */
    private static final Pattern REFERENCE = Pattern.compile("\\b(io\\.symmem(?:\\.[a-z]\\w*)*)\\.[A-Z]\\w*");
    private static final Pattern COMMENTS_AND_STRINGS = Pattern.compile(
            "//[^\\n]*|/\\*.*?\\*/|\"(?:\\\\.|[^\"\\\\])*\"", Pattern.DOTALL);

    @Test
    void noPackageUsesALayerAboveItsOwn() {
        List<String> violations = new ArrayList<>();
        for (Path file : mainSources()) {
            String text = read(file);
            Matcher declared = PACKAGE.matcher(text);
            if (!declared.find()) {
                continue;
            }
            String from = declared.group(1);
            int fromLayer = layerOf(from);
            String[] lines = COMMENTS_AND_STRINGS.matcher(text).replaceAll(m -> blankKeepingLines(m.group())).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                Matcher reference = REFERENCE.matcher(lines[i]);
                while (reference.find()) {
                    String to = reference.group(1);
                    int toLayer = layerOf(to);
                    if (toLayer > fromLayer) {
                        violations.add(MAIN.relativize(file) + ":" + (i + 1) + " uses " + reference.group() + ": " + from
                                + " (" + layerName(fromLayer) + ") may use only its own layer and those below it, not "
                                + layerName(toLayer));
                    }
                }
            }
        }
        assertThat(violations).as("references from a lower layer to a higher one (LayeringTest.LAYERS)").isEmpty();
    }

    @Test
    void noMainSourceFileIsOverFiveHundredLines() {
        List<String> tooLong = new ArrayList<>();
        for (Path file : mainSources()) {
            long lines = read(file).lines().count();
            if (lines > MAX_LINES) {
                tooLong.add(MAIN.relativize(file) + ": " + lines + " lines");
            }
        }
        assertThat(tooLong).as("main Java files over %d lines: split them by job", MAX_LINES).isEmpty();
    }

    @Test
    void everyPackageHasALayer() {
        List<String> unplaced = new ArrayList<>();
        for (Path file : mainSources()) {
            Matcher declared = PACKAGE.matcher(read(file));
            if (declared.find() && layerOf(declared.group(1)) < 0) {
                unplaced.add(declared.group(1));
            }
        }
        assertThat(unplaced).as("packages that LayeringTest.LAYERS does not place").isEmpty();
    }

    private static int layerOf(String pkg) {
        int best = -1;
        int bestLength = -1;
        for (int layer = 0; layer < LAYERS.size(); layer++) {
            for (String prefix : LAYERS.get(layer)) {
                boolean matches = prefix.equals("io.symmem") ? pkg.equals(prefix)
                        : pkg.equals(prefix) || pkg.startsWith(prefix + ".");
                if (matches && prefix.length() > bestLength) {
                    best = layer;
                    bestLength = prefix.length();
                }
            }
        }
        return best;
    }

    private static String layerName(int layer) {
        return layer < 0 ? "a package with no layer" : String.join(", ", LAYERS.get(layer));
    }

    private static String blankKeepingLines(String s) {
        return s.replaceAll("[^\\n]", " ");
    }

    private static List<Path> mainSources() {
        try (Stream<Path> files = Files.walk(MAIN)) {
            return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
