package io.symmem.service.store;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the durations the HTTP routes accept: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT5S}). */
public final class WaitDurations {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    private WaitDurations() {}

    /** @throws IllegalArgumentException naming the text when it is not a non-negative duration */
    public static Duration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("a duration is required (e.g. 5s, 500ms, PT5S)");
        }
        String trimmed = text.trim();
        Matcher m = SHORT.matcher(trimmed);
        Duration result;
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            switch (m.group(2)) {
                case "ms": result = Duration.ofMillis(amount); break;
                case "s": result = Duration.ofSeconds(amount); break;
                case "m": result = Duration.ofMinutes(amount); break;
                default: result = Duration.ofHours(amount); break;
            }
        } else {
            try {
                result = Duration.parse(trimmed);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("'" + text + "' is not a duration (e.g. 5s, 500ms, PT5S)");
            }
        }
        if (result.isNegative()) {
            throw new IllegalArgumentException("'" + text + "' is negative");
        }
        return result;
    }
}
