package io.symmem.store;

/**
 * Bounds on what one frame may carry. They are checked as soon as a length field is read, so an
 * oversized or garbage frame is refused before its payload is buffered.
 *
 * @param maxKeyBytes most bytes of one key (UTF-8 as sent on the wire)
 * @param maxValueBytes most bytes of one value
 * @param maxKeysPerRequest most keys in one CHECK or WAIT
 */
public record StoreLimits(int maxKeyBytes, int maxValueBytes, int maxKeysPerRequest) {

    public static final int DEFAULT_MAX_KEY_BYTES = 4096;
    public static final int DEFAULT_MAX_VALUE_BYTES = 64 * 1024 * 1024;
    public static final int DEFAULT_MAX_KEYS_PER_REQUEST = 64 * 1024;

    public StoreLimits {
        requirePositive(maxKeyBytes, "maxKeyBytes");
        requirePositive(maxValueBytes, "maxValueBytes");
        requirePositive(maxKeysPerRequest, "maxKeysPerRequest");
    }

    public static StoreLimits defaults() {
        return new StoreLimits(DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_KEYS_PER_REQUEST);
    }

    private static void requirePositive(int value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
