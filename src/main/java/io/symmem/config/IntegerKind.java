package io.symmem.config;

import java.math.BigInteger;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A whole number between {@code min} and {@code max}: ASCII digits with an optional leading minus;
 * surrounding whitespace is ignored, as the configuration's integer converter ignores it. Ports are
 * integers from 1 to 65535.
 *
 * <p>{@code readByC}: the variable belongs to a C library (NVSHMEM, NCCL) that reads it with
 * {@code strtol} in base 0, where {@code 010} is octal 8 and {@code 0x10} is 16. A leading zero is then
 * refused, so that symmem and the library can never read two different numbers from one value.
 */
public record IntegerKind(long min, long max, boolean readByC) implements ValueKind {
    public static final IntegerKind PORT = new IntegerKind(1, 65535);

    public IntegerKind(long min, long max) {
        this(min, max, false);
    }

    // Integer.valueOf, which reads the value afterwards, would also take "+5" and non-ASCII digits.
    private static final Pattern FORM = Pattern.compile("-?[0-9]+");
    private static final Pattern LEADING_ZERO = Pattern.compile("-?0[0-9]+");

    @Override
    public Optional<String> refusal(String value) {
        String v = value.trim();
        if (!FORM.matcher(v).matches()) {
            return Optional.of("not an integer");
        }
        if (readByC && LEADING_ZERO.matcher(v).matches()) {
            return Optional.of("a leading zero, which the library reads as an octal number");
        }
        BigInteger n = new BigInteger(v);
        if (n.compareTo(BigInteger.valueOf(min)) < 0) {
            return Optional.of("less than " + min);
        }
        if (n.compareTo(BigInteger.valueOf(max)) > 0) {
            return Optional.of("more than " + max);
        }
        return Optional.empty();
    }
}
