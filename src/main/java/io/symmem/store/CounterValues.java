package io.symmem.store;

import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

/**
 * The values ADD works on: a signed 64-bit integer as decimal ASCII text, as TCPStore stores it. One rule
 * for the server's ADD and for callers that check a value before adding (the HTTP face).
 */
public final class CounterValues {

    private CounterValues() {}

    /** The integer {@code value} holds as ADD reads it (blanks around it ignored), or empty if it holds none. */
    public static OptionalLong parse(byte[] value) {
        try {
            return OptionalLong.of(Long.parseLong(new String(value, StandardCharsets.US_ASCII).trim()));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** The bytes ADD stores for {@code n}. */
    public static byte[] of(long n) {
        return Long.toString(n).getBytes(StandardCharsets.US_ASCII);
    }

    /** The error of an ADD on a key whose value is not an integer, as every store reports it to its caller. */
    public static IllegalArgumentException notAnInteger(String store, String key) {
        return new IllegalArgumentException("store " + store + ": add on key '" + key + "' whose value is not a decimal integer");
    }
}
