package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * Reads a key's value without waiting, in one request on any TCPStore-protocol server. The protocol's
 * GET answers an empty value for a missing key (indistinguishable from an empty value) and {@link Store#get}
 * waits for the key; compare-set answers the value the key holds when it differs from {@code expected},
 * and {@code expected} itself for a missing key. So compare-set of a probe with itself reads the value,
 * or answers the probe when there is none, and changes nothing (a key holding the probe is "set" to itself).
 */
public final class CurrentValue {

    /** Never stored by symmem; NUL bytes keep it apart from any text a user would store. */
    private static final byte[] PROBE = "\0symmem:read-probe\0".getBytes(StandardCharsets.US_ASCII);

    private CurrentValue() {}

    /** The value of {@code key} now, or empty if there is none. */
    public static Uni<Optional<byte[]>> read(Store store, String key) {
        return store.compareSet(key, PROBE, PROBE).map(value -> Arrays.equals(value, PROBE) ? Optional.empty() : Optional.of(value));
    }
}
