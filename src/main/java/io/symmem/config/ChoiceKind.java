package io.symmem.config;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** One of a few words, in any case (the configuration's enum converter ignores case too). */
public record ChoiceKind(List<String> ids) implements ValueKind {

    /** The lower-case names of an enum's constants, as users write them ("auto", "host", "cuda"). */
    public static ChoiceKind of(Class<? extends Enum<?>> type) {
        return new ChoiceKind(Arrays.stream(type.getEnumConstants()).map(c -> c.name().toLowerCase(Locale.ROOT)).toList());
    }

    @Override
    public Optional<String> refusal(String value) {
        return ids.stream().anyMatch(value::equalsIgnoreCase) ? Optional.empty() : Optional.of("");
    }
}
