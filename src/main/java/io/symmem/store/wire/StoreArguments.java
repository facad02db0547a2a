package io.symmem.store.wire;

import io.symmem.store.StoreLimitExceededException;
import io.symmem.store.StoreLimits;
import java.util.List;

/**
 * Checks of keys and values against {@link StoreLimits}, before an operation starts: the one rule for
 * every client and the in-process store, so that a request the server would refuse (and close the
 * connection for) is refused up front with the same message everywhere.
 */
public final class StoreArguments {

    private StoreArguments() {}

    /** The problem with {@code key}, or null when it is acceptable. */
    public static RuntimeException checkKey(String key, StoreLimits limits) {
        if (key == null) {
            return new IllegalArgumentException("key must not be null");
        }
        int bytes = RequestEncoder.keyBytes(WireKeys.onWire(key));
        if (bytes > limits.maxKeyBytes()) {
            return new StoreLimitExceededException("key of " + bytes + " bytes exceeds the store's limit of " + limits.maxKeyBytes());
        }
        return null;
    }

    public static RuntimeException checkKeys(List<String> keys, StoreLimits limits) {
        if (keys == null) {
            return new IllegalArgumentException("keys must not be null");
        }
        if (keys.size() > limits.maxKeysPerRequest()) {
            return new StoreLimitExceededException(keys.size() + " keys in one request exceed the store's limit of "
                    + limits.maxKeysPerRequest());
        }
        for (String key : keys) {
            RuntimeException problem = checkKey(key, limits);
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    public static RuntimeException checkValue(byte[] value, StoreLimits limits) {
        if (value == null) {
            return new IllegalArgumentException("value must not be null");
        }
        if (value.length > limits.maxValueBytes()) {
            return new StoreLimitExceededException("value of " + value.length + " bytes exceeds the store's limit of "
                    + limits.maxValueBytes());
        }
        return null;
    }

    /** MULTI_SET's keys and values: the first problem, or null. */
    public static RuntimeException checkMultiSet(List<String> keys, List<byte[]> values, StoreLimits limits) {
        RuntimeException problem = checkKeys(keys, limits);
        if (problem != null) {
            return problem;
        }
        if (values == null) {
            return new IllegalArgumentException("values must not be null");
        }
        if (keys.size() != values.size()) {
            return new IllegalArgumentException("multiSet got " + keys.size() + " keys but " + values.size() + " values");
        }
        for (byte[] value : values) {
            problem = checkValue(value, limits);
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }

    /** The first non-null problem, or null. */
    public static RuntimeException first(RuntimeException... problems) {
        for (RuntimeException problem : problems) {
            if (problem != null) {
                return problem;
            }
        }
        return null;
    }
}
