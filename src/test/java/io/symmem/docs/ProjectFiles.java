package io.symmem.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The project's files that the docs checks read: found by ending under a folder, read whole. */
final class ProjectFiles {
    private ProjectFiles() {
    }

    /** The regular files under {@code root} whose names end with one of {@code endings}, sorted. */
    static List<Path> under(Path root, String... endings) {
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
