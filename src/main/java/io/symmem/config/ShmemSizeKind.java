package io.symmem.config;

import java.math.BigInteger;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A size as NVSHMEM reads {@code NVSHMEM_SYMMETRIC_SIZE}, which symmem passes on untouched: a whole
 * number of bytes, optionally followed by one letter K, M, G or T in any case, each a power of 1024
 * ({@code 512M}, {@code 2g}, {@code 1073741824}).
 *
 * <p>Narrower than NVSHMEM on purpose. NVSHMEM reads a floating-point number and then looks at one
 * character only, so it takes {@code 1.5G} and {@code 1e9}, reads {@code 1GB} and {@code 1GiB} as
 * 2^30 bytes (where symmem's own sizes read {@code 1GB} as 10^9), and turns a negative number with a
 * suffix into a huge one. Only the forms that mean the same number to every reader pass here; symmem's
 * own {@code SYMMEM_NVSHMEM_HEAP_SIZE} takes the full {@link ByteSize} forms and is exported in bytes.
 */
public record ShmemSizeKind(long min, long max) implements ValueKind {
    private static final Pattern FORM = Pattern.compile("([0-9]+)([KkMmGgTt]?)");

    @Override
    public Optional<String> refusal(String value) {
        Matcher m = FORM.matcher(value);
        if (!m.matches()) {
            return Optional.of("not a size");
        }
        BigInteger bytes = new BigInteger(m.group(1)).shiftLeft(shift(m.group(2)));
        if (bytes.compareTo(BigInteger.valueOf(min)) < 0) {
            return Optional.of("less than " + min + (min == 1 ? " byte" : " bytes"));
        }
        if (bytes.compareTo(BigInteger.valueOf(max)) > 0) {
            return Optional.of("more than " + max + " bytes");
        }
        return Optional.empty();
    }

    /** The bytes a valid value stands for. */
    public static long bytes(String value) {
        Matcher m = FORM.matcher(value);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + value + "' is not a size NVSHMEM reads alike");
        }
        return new BigInteger(m.group(1)).shiftLeft(shift(m.group(2))).longValueExact();
    }

    private static int shift(String suffix) {
        return switch (suffix.toUpperCase(Locale.ROOT)) {
            case "K" -> 10;
            case "M" -> 20;
            case "G" -> 30;
            case "T" -> 40;
            default -> 0;
        };
    }

    /** For the configuration mapping: the same rule, so that nothing reads the value more loosely. */
    public static class Converter implements org.eclipse.microprofile.config.spi.Converter<Long> {
        @Override
        public Long convert(String value) {
            if (value == null || value.isEmpty()) {
                return null;
            }
            try {
                return bytes(value);
            } catch (ArithmeticException tooLarge) {
                throw new IllegalArgumentException("'" + value + "' is more than " + Long.MAX_VALUE + " bytes");
            }
        }
    }
}
