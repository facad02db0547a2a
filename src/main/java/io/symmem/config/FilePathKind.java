package io.symmem.config;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * An absolute path of a file. Relative paths are refused because a library loader would search for
 * them (a bare name goes through the loader path, not the directory the user meant); an existing
 * directory is refused because a file was meant. Whether the file exists is NOT checked here: the
 * variable may be set for every command while only some use it, and the one that loads the file
 * reports a missing one with everything it tried.
 */
public record FilePathKind() implements ValueKind {
    @Override
    public Optional<String> refusal(String value) {
        if (value.chars().anyMatch(Character::isISOControl)) {
            return Optional.of("it contains a control character");
        }
        Path path;
        try {
            path = Path.of(value);
        } catch (InvalidPathException e) {
            return Optional.of("not a path: " + e.getReason());
        }
        if (!path.isAbsolute()) {
            return Optional.of("a relative path");
        }
        if (Files.isDirectory(path)) {
            return Optional.of("a directory, not a file");
        }
        return Optional.empty();
    }
}
