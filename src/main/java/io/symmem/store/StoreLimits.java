package io.symmem.store;

import java.time.Duration;
import java.util.Objects;

/**
 * Bounds on what one frame may carry, and on what one connection may make the server hold.
 *
 * <p>Frame limits are checked as soon as a length field is read, so an oversized or garbage frame is
 * refused before its payload is buffered.
 *
 * <p>The answer-queue bounds protect the store from clients that do not read their answers (see
 * the server's answer queue): a connection whose unsent answers reach {@code answerQueueBytes} is no longer
 * read from, and its requests are no longer applied, until they drain to half of it; one whose answer
 * bytes queued in the server pass {@code answerQueueCloseBytes}, or that is held back that long
 * without its socket taking a byte for {@code answerDrainTimeout}, is closed. The same
 * {@code answerQueueBytes} bounds the requests a connection has sent that the server holds unapplied
 * (behind a pending WAIT).
 *
 * @param maxKeyBytes most bytes of one key (UTF-8 as sent on the wire)
 * @param maxValueBytes most bytes of one value
 * @param maxKeysPerRequest most keys in one CHECK, WAIT, MULTI_GET or MULTI_SET
 * @param answerQueueBytes unsent answer bytes at which a connection is paused (soft bound)
 * @param answerQueueCloseBytes answer bytes queued in the server past which a connection is closed (hard bound)
 * @param answerDrainTimeout how long a paused connection may go without its socket taking a byte before it is closed
 */
public record StoreLimits(int maxKeyBytes, int maxValueBytes, int maxKeysPerRequest,
                          long answerQueueBytes, long answerQueueCloseBytes, Duration answerDrainTimeout) {

    public static final int DEFAULT_MAX_KEY_BYTES = 4096;
    public static final int DEFAULT_MAX_VALUE_BYTES = 64 * 1024 * 1024;
    public static final int DEFAULT_MAX_KEYS_PER_REQUEST = 64 * 1024;
    public static final long DEFAULT_ANSWER_QUEUE_BYTES = 16L * 1024 * 1024;
    /**
     * Four times the soft bound. Answers are copied into the queue in slices of at most
     * the answer queue's 64 KiB slice and only while the queue is under the soft bound, so with these
     * defaults the queue stays under 16 MiB + 64 KiB even for a 64 MiB value, and the hard bound is a
     * backstop that no sequence of requests reaches.
     */
    public static final long DEFAULT_ANSWER_QUEUE_CLOSE_BYTES = 4 * DEFAULT_ANSWER_QUEUE_BYTES;
    public static final Duration DEFAULT_ANSWER_DRAIN_TIMEOUT = Duration.ofSeconds(60);

    public StoreLimits {
        requirePositive(maxKeyBytes, "maxKeyBytes");
        requirePositive(maxValueBytes, "maxValueBytes");
        requirePositive(maxKeysPerRequest, "maxKeysPerRequest");
        requirePositive(answerQueueBytes, "answerQueueBytes");
        if (answerQueueCloseBytes < answerQueueBytes) {
            throw new IllegalArgumentException("answerQueueCloseBytes (" + answerQueueCloseBytes
                    + ") must not be below answerQueueBytes (" + answerQueueBytes + ")");
        }
        Objects.requireNonNull(answerDrainTimeout, "answerDrainTimeout must not be null");
        if (answerDrainTimeout.isNegative() || answerDrainTimeout.isZero()) {
            throw new IllegalArgumentException("answerDrainTimeout must be positive, got " + answerDrainTimeout);
        }
    }

    /** Frame limits as given, answer-queue bounds at their defaults. */
    public StoreLimits(int maxKeyBytes, int maxValueBytes, int maxKeysPerRequest) {
        this(maxKeyBytes, maxValueBytes, maxKeysPerRequest, DEFAULT_ANSWER_QUEUE_BYTES, DEFAULT_ANSWER_QUEUE_CLOSE_BYTES,
                DEFAULT_ANSWER_DRAIN_TIMEOUT);
    }

    public static StoreLimits defaults() {
        return new StoreLimits(DEFAULT_MAX_KEY_BYTES, DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_KEYS_PER_REQUEST);
    }

    /** These limits with other answer-queue bounds (soft, hard, drain timeout). */
    public StoreLimits withAnswerQueue(long queueBytes, long closeBytes, Duration drainTimeout) {
        return new StoreLimits(maxKeyBytes, maxValueBytes, maxKeysPerRequest, queueBytes, closeBytes, drainTimeout);
    }

    private static void requirePositive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
