package io.symmem.config;

import io.quarkus.runtime.configuration.DurationConverter;
import java.time.Duration;
import java.util.Optional;

/**
 * A duration between {@code min} and {@code max}, read by the converter the configuration itself
 * uses (Quarkus's: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, a plain number of seconds, or
 * ISO-8601 such as {@code PT30S}), so the check and the value read can never disagree.
 */
public record DurationKind(Duration min, Duration max) implements ValueKind {
    /** Deadlines: positive, and within what a millisecond int timer holds (Integer.MAX_VALUE ms is 24.8 days). */
    public static final DurationKind TIMEOUT = new DurationKind(Duration.ofMillis(1), Duration.ofDays(24));

    private static final DurationConverter CONVERTER = new DurationConverter();

    @Override
    public Optional<String> refusal(String value) {
        Duration d;
        try {
            d = CONVERTER.convert(value);
        } catch (RuntimeException e) {
            return Optional.of("not a duration");
        }
        if (d == null) {
            return Optional.of("not a duration");
        }
        if (d.compareTo(min) < 0) {
            return Optional.of(d.isNegative() || d.isZero() ? "not positive" : "shorter than " + written(min));
        }
        if (d.compareTo(max) > 0) {
            return Optional.of("longer than " + written(max));
        }
        return Optional.empty();
    }

    /** As a user would write the bound: "300ms", "10m", "24d". */
    private static String written(Duration d) {
        long ms = d.toMillis();
        for (long[] unit : new long[][] {{86_400_000, 'd'}, {60_000, 'm'}, {1_000, 's'}}) {
            if (ms % unit[0] == 0) {
                return ms / unit[0] + String.valueOf((char) unit[1]);
            }
        }
        return ms + "ms";
    }
}
