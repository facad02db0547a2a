package io.symmem.store;

import io.symmem.config.ConfigVariable;

/**
 * How long the store polls before it sleeps: the client for its answer
 * ({@code SYMMEM_STORE_SPIN_MICROS}), the server's event loop after its last request
 * ({@code SYMMEM_STORE_SERVER_SPIN_MICROS}). Environment variables rather than the rank's
 * configuration, because the store's classes are also used outside a rank (benchmarks, scripts,
 * other JVM programs). Their rules are {@link ConfigVariable}'s, so the symmem commands check them
 * with every other variable before they start (a bad value: one line, exit status 2); here a bad value
 * can only come from another program, and fails with the same message.
 *
 * <p>Default: {@value #DEFAULT_MICROS} µs on machines with at least {@value #MIN_CORES_FOR_DEFAULT}
 * cores, 0 (block at once) on smaller ones, where a polling thread would take the core that the
 * other side of the round trip needs.
 */
public final class StoreSpin {

    static final long DEFAULT_MICROS = 50;
    static final int MIN_CORES_FOR_DEFAULT = 8;

    private StoreSpin() {
    }

    public static long clientNanos() {
        return 1_000L * fromEnvironment(ConfigVariable.SYMMEM_STORE_SPIN_MICROS);
    }

    public static long serverNanos() {
        return 1_000L * fromEnvironment(ConfigVariable.SYMMEM_STORE_SERVER_SPIN_MICROS);
    }

    private static long fromEnvironment(ConfigVariable variable) {
        return micros(variable, System.getenv(variable.name()), Runtime.getRuntime().availableProcessors());
    }

    /**
     * The poll window in µs that {@code value} of {@code variable} asks for, or the default for a machine
     * of {@code cores} cores when it is null (unset). Reads nothing from the environment.
     *
     * @throws IllegalArgumentException naming the variable when the value is not allowed
     */
    static long micros(ConfigVariable variable, String value, int cores) {
        if (value == null) {
            return cores >= MIN_CORES_FOR_DEFAULT ? DEFAULT_MICROS : 0;
        }
        variable.problem(value).ifPresent(problem -> {
            throw new IllegalArgumentException(problem);
        });
        return Long.parseLong(value.trim());
    }
}
