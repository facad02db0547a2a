package io.symmem.store;

import java.math.BigInteger;
import java.util.regex.Pattern;

/**
 * How long the store polls before it sleeps: the client for its answer
 * ({@code SYMMEM_STORE_SPIN_MICROS}), the server's event loop after its last request
 * ({@code SYMMEM_STORE_SERVER_SPIN_MICROS}). Environment variables rather than the rank's
 * configuration, because the store's classes are also used outside a rank (benchmarks, scripts,
 * other JVM programs). The symmem commands check them with every other variable before they start
 * (io.symmem.config.ConfigVariable, which takes its range from here: a bad value is one line, exit
 * status 2); here a bad value can only come from another program, and fails naming the variable.
 *
 * <p>Default: {@value #DEFAULT_MICROS} µs on machines with at least {@value #MIN_CORES_FOR_DEFAULT}
 * cores, 0 (block at once) on smaller ones, where a polling thread would take the core that the
 * other side of the round trip needs.
 */
public final class StoreSpin {

    public static final String CLIENT_VARIABLE = "SYMMEM_STORE_SPIN_MICROS";
    public static final String SERVER_VARIABLE = "SYMMEM_STORE_SERVER_SPIN_MICROS";
    /** The longest poll window allowed, in µs. */
    public static final int MAX_MICROS = 10_000;
    static final long DEFAULT_MICROS = 50;
    static final int MIN_CORES_FOR_DEFAULT = 8;
    // As io.symmem.config.IntegerKind reads integers: ASCII digits, an optional leading minus.
    private static final Pattern INTEGER = Pattern.compile("-?[0-9]+");

    private StoreSpin() {
    }

    public static long clientNanos() {
        return 1_000L * fromEnvironment(CLIENT_VARIABLE);
    }

    public static long serverNanos() {
        return 1_000L * fromEnvironment(SERVER_VARIABLE);
    }

    private static long fromEnvironment(String variable) {
        return micros(variable, System.getenv(variable), Runtime.getRuntime().availableProcessors());
    }

    /**
     * The poll window in µs that {@code value} of {@code variable} asks for, or the default for a machine
     * of {@code cores} cores when it is null (unset). Reads nothing from the environment.
     *
     * @throws IllegalArgumentException naming the variable when the value is not allowed
     */
    static long micros(String variable, String value, int cores) {
        if (value == null) {
            return cores >= MIN_CORES_FOR_DEFAULT ? DEFAULT_MICROS : 0;
        }
        String trimmed = value.trim();
        String why = trimmed.isEmpty() ? "empty" : !INTEGER.matcher(trimmed).matches() ? "not an integer"
                : new BigInteger(trimmed).signum() < 0 ? "less than 0"
                : new BigInteger(trimmed).compareTo(BigInteger.valueOf(MAX_MICROS)) > 0 ? "more than " + MAX_MICROS : null;
        if (why != null) {
            // The form of io.symmem.config.ConfigVariable's message for the same variables.
            throw new IllegalArgumentException(variable + "=" + value + " is invalid: expected microseconds, 0.." + MAX_MICROS
                    + " (" + why + ")");
        }
        return Long.parseLong(trimmed);
    }
}
