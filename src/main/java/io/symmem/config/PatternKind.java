package io.symmem.config;

import java.util.Optional;
import java.util.regex.Pattern;

/** Text matching a regular expression as a whole (e.g. a run id, which becomes a store key segment). */
public record PatternKind(Pattern pattern) implements ValueKind {
    @Override
    public Optional<String> refusal(String value) {
        return pattern.matcher(value).matches() ? Optional.empty() : Optional.of("");
    }
}
