package io.symmem.config;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * true/false, 1/0, yes/no in any case, and nothing else: SmallRye's converter reads any other word
 * as false (with a warning), so "maybe" or "2" would silently turn a feature off. No surrounding
 * spaces either: the native core reads the same variables ({@code SYMMEM_DISABLE_MULTICAST}, ...)
 * and compares the raw text, so " 1" must not be true here and false there.
 */
public record BooleanKind() implements ValueKind {
    private static final Set<String> TRUE = Set.of("true", "1", "yes");
    private static final Set<String> FALSE = Set.of("false", "0", "no");

    @Override
    public Optional<String> refusal(String value) {
        return parse(value) == null ? Optional.of("") : Optional.empty();
    }

    /** The value, or null when it is none of the accepted words. */
    static Boolean parse(String value) {
        String v = value.toLowerCase(Locale.ROOT);
        return TRUE.contains(v) ? Boolean.TRUE : FALSE.contains(v) ? Boolean.FALSE : null;
    }

    /** The same rule for the configuration mapping, so that nothing else reads these variables more loosely. */
    public static class Converter implements org.eclipse.microprofile.config.spi.Converter<Boolean> {
        @Override
        public Boolean convert(String value) {
            if (value == null || value.isEmpty()) {
                return null; // unset: the mapping's default applies
            }
            Boolean parsed = parse(value);
            if (parsed == null) {
                throw new IllegalArgumentException("'" + value + "' is not true or false (1/0, yes/no)");
            }
            return parsed;
        }
    }
}
