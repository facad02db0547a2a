package io.symmem.config;

import java.util.Optional;

/**
 * An absolute path. Relative ones are refused because ranks may be started from another working
 * directory than the shell that set the variable, and {@code ~} because only a shell expands it: a
 * quoted {@code "~/nvshmem"} reaches symmem as is and names a directory called "~". Whether the path
 * exists is not a matter of form: the code that uses it says what it looked for there.
 */
public record PathKind() implements ValueKind {
    @Override
    public Optional<String> refusal(String value) {
        if (value.startsWith("~")) {
            return Optional.of("'~' is not expanded here: write the home directory out");
        }
        if (!value.startsWith("/")) {
            return Optional.of("not absolute");
        }
        if (value.chars().anyMatch(Character::isISOControl)) {
            return Optional.of("a control character");
        }
        return Optional.empty();
    }
}
