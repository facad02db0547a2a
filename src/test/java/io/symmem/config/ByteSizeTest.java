package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * ByteSize against an independent model: the exact value is computed with BigInteger from a regular
 * expression written here, so a parser that wraps, truncates or reads a bit of garbage differs.
 */
class ByteSizeTest {

    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** The documented grammar, on its own: spaces/tabs, ASCII digits, optional unit of any case. */
    private static final Pattern MODEL = Pattern.compile("[ \\t]*([0-9]+)[ \\t]*(b|kib|mib|gib|tib|kb|mb|gb|tb)?[ \\t]*",
            Pattern.CASE_INSENSITIVE);

    private static BigInteger factor(String unit) {
        return switch (unit == null ? "b" : unit.toLowerCase(Locale.ROOT)) {
            case "b" -> BigInteger.ONE;
            case "kib" -> BigInteger.TWO.pow(10);
            case "mib" -> BigInteger.TWO.pow(20);
            case "gib" -> BigInteger.TWO.pow(30);
            case "tib" -> BigInteger.TWO.pow(40);
            case "kb" -> BigInteger.TEN.pow(3);
            case "mb" -> BigInteger.TEN.pow(6);
            case "gb" -> BigInteger.TEN.pow(9);
            case "tb" -> BigInteger.TEN.pow(12);
            default -> throw new AssertionError(unit);
        };
    }

    /** The value the model gives {@code text}, or null when the model refuses it. */
    private static BigInteger model(String text) {
        Matcher m = MODEL.matcher(text);
        return m.matches() ? new BigInteger(m.group(1)).multiply(factor(m.group(2))) : null;
    }

    @Property(tries = 2000)
    void aNumberWithAUnitIsExactlyNumberTimesFactorOrAnOverflowError(@ForAll("numbers") long n, @ForAll("units") String unit,
            @ForAll("gaps") String gap) {
        String text = n + gap + unit;
        BigInteger expected = BigInteger.valueOf(n).multiply(factor(unit.isEmpty() ? null : unit));
        if (expected.compareTo(LONG_MAX) <= 0) {
            assertThat(ByteSize.parse(text)).isEqualTo(expected.longValueExact());
        } else {
            assertThatThrownBy(() -> ByteSize.parse(text)).isInstanceOf(ByteSize.InvalidSizeException.class)
                    .hasMessageContaining("more than " + Long.MAX_VALUE + " bytes");
        }
    }

    @Property(tries = 2000)
    void formatThenParseGivesTheNumberBack(@ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long n) {
        assertThat(ByteSize.parse(ByteSize.format(n))).isEqualTo(n);
    }

    @Property(tries = 1000)
    void roundNumbersFormatInTheirUnit(@ForAll @LongRange(min = 1, max = (1 << 20) - 1) long n) {
        assertThat(ByteSize.format(n << 20)).isEqualTo(n % 1024 == 0 ? (n >> 10) + " GiB" : n + " MiB");
    }

    @Property(tries = 1000)
    void aMaximumIsNeverExceeded(@ForAll("numbers") long n, @ForAll("units") String unit,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE) long max) {
        String text = n + unit;
        BigInteger expected = model(text);
        if (expected.compareTo(BigInteger.valueOf(max)) <= 0) {
            assertThat(ByteSize.parse(text, 0, max)).isEqualTo(expected.longValueExact());
        } else {
            assertThatThrownBy(() -> ByteSize.parse(text, 0, max)).isInstanceOf(ByteSize.InvalidSizeException.class)
                    .hasMessageContaining("more than " + max + " bytes");
        }
    }

    /** Any text at all: either the model reads it, and then to the same number, or ByteSize refuses it. */
    @Property(tries = 5000)
    void garbageIsRefusedNeverReadAsSomethingElse(@ForAll("texts") String text) {
        BigInteger expected = model(text);
        if (expected != null && expected.compareTo(LONG_MAX) <= 0) {
            assertThat(ByteSize.parse(text)).isEqualTo(expected.longValueExact());
        } else {
            assertThatThrownBy(() -> ByteSize.parse(text)).isInstanceOf(ByteSize.InvalidSizeException.class);
        }
    }

    @Example
    void unitsAreCaseInsensitiveAndKbMeansKilobytes() {
        assertThat(ByteSize.parse("4kib")).isEqualTo(4096);
        assertThat(ByteSize.parse("4KIB")).isEqualTo(4096);
        assertThat(ByteSize.parse("4KiB")).isEqualTo(4096);
        assertThat(ByteSize.parse("4KB")).isEqualTo(4000);
        assertThat(ByteSize.parse("4kb")).isEqualTo(4000);
        assertThat(ByteSize.parse("1MB")).isEqualTo(1_000_000);
        assertThat(ByteSize.parse("1TiB")).isEqualTo(1L << 40);
        assertThat(ByteSize.parse(" 64 MiB ")).isEqualTo(64L << 20);
        assertThat(ByteSize.parse("0")).isZero();
        assertThat(ByteSize.parse("7B")).isEqualTo(7);
    }

    @Example
    void eachRefusalSaysWhy() {
        assertThat(reason("4k")).isEqualTo("ambiguous (4KiB for powers of 1024, 4KB for powers of 1000)");
        assertThat(reason("2G")).startsWith("ambiguous");
        assertThat(reason("1XB")).isEqualTo("not a size (unknown unit 'XB')");
        assertThat(reason("-1")).isEqualTo("negative");
        assertThat(reason("+1")).contains("no sign");
        assertThat(reason("1.5MiB")).startsWith("not a whole number");
        assertThat(reason("")).isEqualTo("empty");
        assertThat(reason("1e6")).startsWith("not a size");
        assertThat(reason("0x10")).startsWith("not a size");
        assertThat(reason("1_000")).isEqualTo("not a size");
        assertThat(reason("\u0661\u0662")).isEqualTo("not a size"); // Arabic-Indic digits: Long.parseLong would take them
        assertThat(reason("8EiB")).startsWith("not a size");
        assertThat(reason("4KiBs")).startsWith("not a size");
        assertThat(reason("1 KiB B")).startsWith("not a size");
        assertThat(reason("9223372036854775808")).isEqualTo("more than 9223372036854775807 bytes");
        assertThat(reason("8388608TiB")).isEqualTo("more than 9223372036854775807 bytes");
        assertThat(reason2("0", 1, 10)).isEqualTo("less than 1 byte");
        assertThatThrownBy(() -> ByteSize.parse("1XB")).hasMessage("'1XB' is not a size (unknown unit 'XB'): use " + ByteSize.FORMS);
    }

    private static String reason(String text) {
        return reason2(text, 0, Long.MAX_VALUE);
    }

    private static String reason2(String text, long min, long max) {
        try {
            ByteSize.parse(text, min, max);
        } catch (ByteSize.InvalidSizeException e) {
            return e.reason();
        }
        throw new AssertionError("'" + text + "' was accepted");
    }

    @Provide
    Arbitrary<Long> numbers() {
        // Small numbers, numbers near each unit's overflow boundary, and any long.
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 100_000),
                Arbitraries.longs().between(0, Long.MAX_VALUE),
                Arbitraries.of(ByteSize.Unit.values()).flatMap(u -> {
                    long edge = Long.MAX_VALUE / u.bytes();
                    return Arbitraries.longs().between(edge - 3, edge > Long.MAX_VALUE - 3 ? Long.MAX_VALUE : edge + 3);
                }));
    }

    @Provide
    Arbitrary<String> units() {
        Arbitrary<String> symbols = Arbitraries.of("", "B", "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB");
        // The same unit in a random mix of cases: "kIb", "MB", "gb", ...
        return symbols.flatMap(s -> Arbitraries.integers().between(0, (1 << s.length()) - 1).map(mask -> {
            StringBuilder mixed = new StringBuilder();
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                mixed.append((mask >> i & 1) == 1 ? Character.toUpperCase(c) : Character.toLowerCase(c));
            }
            return mixed.toString();
        }));
    }

    @Provide
    Arbitrary<String> gaps() {
        return Arbitraries.of("", "", " ", "\t", "  ");
    }

    @Provide
    Arbitrary<String> texts() {
        // Any characters; characters a size is made of, so that near misses come often; and valid sizes
        // with one character changed, inserted or removed.
        Arbitrary<String> any = Arbitraries.strings().all().ofMaxLength(12);
        Arbitrary<String> near = Arbitraries.strings().withChars("0123456789 \t.,_-+eExXkKmMgGtTpPiIbB\u0661\uFF11\u212A")
                .ofMaxLength(10);
        Arbitrary<String> valid = Combinators.combine(numbers(), gaps(), units()).as((n, g, u) -> n + g + u);
        Arbitrary<Character> someChar = Arbitraries.oneOf(Arbitraries.chars().all(), Arbitraries.chars().alpha(),
                Arbitraries.chars().with("0123456789 \t.,_-+eExXsS"));
        Arbitrary<String> suffixed = Combinators.combine(valid, Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(3))
                .as((s, tail) -> s + tail);
        Arbitrary<String> mutated = Combinators.combine(valid, Arbitraries.integers().between(0, 40),
                someChar, Arbitraries.integers().between(0, 2)).as((s, at, c, how) -> {
                    int i = Math.min(at, s.length());
                    return switch (how) {
                        case 0 -> s.substring(0, i) + c + s.substring(i);
                        case 1 -> i < s.length() ? s.substring(0, i) + c + s.substring(i + 1) : s + c;
                        default -> i < s.length() ? s.substring(0, i) + s.substring(i + 1) : s;
                    };
                });
        return Arbitraries.oneOf(any, near, valid, suffixed, mutated);
    }
}
