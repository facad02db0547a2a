package io.symmem.store;

/**
 * How long the store polls before it sleeps: the client for its answer
 * ({@value #CLIENT_VARIABLE}), the server's event loop after its last request
 * ({@value #SERVER_VARIABLE}). Environment variables rather than the rank's configuration, because
 * the store's classes are also used outside a rank (benchmarks, scripts, other JVM programs).
 *
 * <p>Default: {@value #DEFAULT_MICROS} µs on machines with at least {@value #MIN_CORES_FOR_DEFAULT}
 * cores, 0 (block at once) on smaller ones, where a polling thread would take the core that the
 * other side of the round trip needs.
 */
final class StoreSpin {

    static final String CLIENT_VARIABLE = "SYMMEM_STORE_SPIN_MICROS";
    static final String SERVER_VARIABLE = "SYMMEM_STORE_SERVER_SPIN_MICROS";
    static final long DEFAULT_MICROS = 50;
    static final int MIN_CORES_FOR_DEFAULT = 8;
    static final long MAX_MICROS = 10_000;

    private StoreSpin() {
    }

    static long clientNanos() {
        return 1_000L * micros(CLIENT_VARIABLE, System.getenv(CLIENT_VARIABLE), Runtime.getRuntime().availableProcessors());
    }

    static long serverNanos() {
        return 1_000L * micros(SERVER_VARIABLE, System.getenv(SERVER_VARIABLE), Runtime.getRuntime().availableProcessors());
    }

    /** The value of {@code variable} in µs, or the default for a machine of {@code cores} cores when unset. */
    static long micros(String variable, String value, int cores) {
        if (value == null || value.isBlank()) {
            return cores >= MIN_CORES_FOR_DEFAULT ? DEFAULT_MICROS : 0;
        }
        try {
            long micros = Long.parseLong(value.trim());
            if (micros >= 0 && micros <= MAX_MICROS) {
                return micros;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(variable + "=" + value + " is invalid: expected microseconds, 0.." + MAX_MICROS);
    }
}
