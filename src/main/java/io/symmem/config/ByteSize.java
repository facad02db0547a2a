package io.symmem.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes as users write them: the one parser behind every size symmem reads, command-line
 * options ({@code --sizes 64KiB}) and variables ({@code SYMMEM_STORE_MAX_VALUE_BYTES=64MiB}) alike.
 *
 * <p>Accepted: a whole number of bytes in ASCII digits, optionally followed by a unit:
 * {@code B}; {@code KiB MiB GiB TiB} (powers of 1024); {@code KB MB GB TB} (powers of 1000). Units
 * are case-insensitive ({@code kib}, {@code KIB} and {@code KiB} are one unit; {@code kb} is 1000
 * bytes: there are no bits here). Spaces or tabs may stand around the value and between number and
 * unit ({@code "64 KiB"}).
 *
 * <p>Refused, each with its reason: a lone {@code K}, {@code M}, {@code G} or {@code T} (ambiguous:
 * people mean 1024 or 1000 by it, and the difference is real at GiB scale), a sign, a fraction
 * ({@code 1.5MiB}: only whole numbers are exact), exponents, digit separators, non-ASCII digits,
 * any other unit, and a value over the caller's maximum ({@link Long#MAX_VALUE} at most) — never
 * wrapped or truncated.
 */
public final class ByteSize {

    /** What a size may look like, for error messages and help texts. */
    public static final String FORMS = "a whole number of bytes, optionally followed by a unit: B, KiB, MiB, GiB, TiB "
            + "(powers of 1024) or KB, MB, GB, TB (powers of 1000), any case, e.g. 4096, 64KiB, 1MB";

    /** The units, largest first within each family (the order {@link #format} tries them in). */
    public enum Unit {
        TIB("TiB", 1L << 40), GIB("GiB", 1L << 30), MIB("MiB", 1L << 20), KIB("KiB", 1L << 10),
        TB("TB", 1_000_000_000_000L), GB("GB", 1_000_000_000L), MB("MB", 1_000_000L), KB("KB", 1_000L),
        B("B", 1L);

        private final String symbol;
        private final long bytes;

        Unit(String symbol, long bytes) {
            this.symbol = symbol;
            this.bytes = bytes;
        }

        /** As written in help texts and by {@link #format}, e.g. "KiB". */
        public String symbol() {
            return symbol;
        }

        /** Bytes in one of this unit. */
        public long bytes() {
            return bytes;
        }
    }

    /** A text that is not a size, or a size out of the caller's range; {@link #reason()} says which. */
    public static final class InvalidSizeException extends IllegalArgumentException {
        private final String reason;

        InvalidSizeException(String text, String reason) {
            super("'" + text + "' is " + reason + ": use " + FORMS);
            this.reason = reason;
        }

        /** Why, without the value: "not a size", "ambiguous (...)", "more than 2147483647 bytes", ... */
        public String reason() {
            return reason;
        }
    }

    // Only ASCII letters can form a unit, so no Unicode case folding (e.g. the Kelvin sign) can turn
    // something else into "k"; only ASCII digits can form the number, so Long.parseLong never meets the
    // non-ASCII digits it would otherwise accept.
    private static final Pattern FORM = Pattern.compile("[ \\t]*([0-9]+)[ \\t]*([A-Za-z]*)[ \\t]*");
    private static final Pattern SIGNED = Pattern.compile("[ \\t]*[+-][ \\t]*[0-9].*");
    private static final Pattern FRACTION = Pattern.compile("[ \\t]*[0-9]*[.,][0-9]+[ \\t]*[A-Za-z]*[ \\t]*");

    private ByteSize() {
    }

    /** A size of 0 up to {@link Long#MAX_VALUE} bytes. */
    public static long parse(String text) {
        return parse(text, 0, Long.MAX_VALUE);
    }

    /**
     * A size between {@code min} and {@code max} bytes (inclusive).
     *
     * @throws InvalidSizeException when {@code text} is no size, or one outside the range
     */
    public static long parse(String text, long min, long max) {
        if (text == null || text.isBlank()) {
            throw new InvalidSizeException(text == null ? "" : text, "empty");
        }
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            throw new InvalidSizeException(text, refusal(text));
        }
        Unit unit = unit(m.group(2));
        if (unit == null) {
            throw new InvalidSizeException(text, unknownUnit(m.group(1), m.group(2)));
        }
        long bytes;
        try {
            bytes = Math.multiplyExact(Long.parseLong(m.group(1)), unit.bytes());
        } catch (NumberFormatException | ArithmeticException tooLarge) {
            // Only digits reach parseLong, so its only failure is a number past Long.MAX_VALUE.
            throw new InvalidSizeException(text, "more than " + max + " bytes");
        }
        if (bytes > max) {
            throw new InvalidSizeException(text, "more than " + max + " bytes");
        }
        if (bytes < min) {
            throw new InvalidSizeException(text, "less than " + min + (min == 1 ? " byte" : " bytes"));
        }
        return bytes;
    }

    /**
     * {@code bytes} in the largest binary unit that holds it exactly ("4 KiB", "1000 B"), so that
     * {@link #parse} reads it back as the same number.
     */
    public static String format(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("a size cannot be negative: " + bytes);
        }
        for (Unit unit : new Unit[] {Unit.TIB, Unit.GIB, Unit.MIB, Unit.KIB}) {
            if (bytes >= unit.bytes() && bytes % unit.bytes() == 0) {
                return bytes / unit.bytes() + " " + unit.symbol();
            }
        }
        return bytes + " B";
    }

    private static Unit unit(String written) {
        if (written.isEmpty()) {
            return Unit.B;
        }
        for (Unit unit : Unit.values()) {
            if (unit.symbol().equalsIgnoreCase(written)) {
                return unit;
            }
        }
        return null;
    }

    private static String unknownUnit(String number, String written) {
        String letter = written.toLowerCase(Locale.ROOT);
        if (letter.equals("k") || letter.equals("m") || letter.equals("g") || letter.equals("t")) {
            String upper = letter.toUpperCase(Locale.ROOT);
            return "ambiguous (" + number + upper + "iB for powers of 1024, " + number + upper + "B for powers of 1000)";
        }
        return "not a size (unknown unit '" + written + "')";
    }

    private static String refusal(String text) {
        if (SIGNED.matcher(text).matches()) {
            return text.strip().startsWith("-") ? "negative" : "not a size (no sign allowed)";
        }
        if (FRACTION.matcher(text).matches()) {
            return "not a whole number (write it in a smaller unit)";
        }
        return "not a size";
    }
}
