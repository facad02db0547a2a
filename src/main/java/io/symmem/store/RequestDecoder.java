package io.symmem.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Server side: turns received bytes into {@link StoreRequest}s, one complete frame at a time.
 * Lengths are checked against {@link StoreLimits} the moment they are read, so a frame that
 * announces a huge key or value is refused without buffering it.
 *
 * <p>Keys are decoded as ISO-8859-1: one char per byte, so any byte string TCPStore allows (it
 * uses std::string) round-trips exactly, and key lengths in chars equal wire lengths in bytes.
 */
final class RequestDecoder {

    private final StoreLimits limits;

    RequestDecoder(StoreLimits limits) {
        this.limits = limits;
    }

    /**
     * Decodes the next frame, or returns null (with the input rewound) if it is not complete yet.
     *
     * @throws StoreProtocolException for an unknown or unsupported query type or a length over the limits
     */
    StoreRequest next(FrameInput in) {
        int start = in.position();
        StoreRequest request = decode(in);
        if (request == null) {
            in.rewind(start);
        }
        return request;
    }

    private StoreRequest decode(FrameInput in) {
        if (!in.has(1)) {
            return null;
        }
        int code = in.readUnsignedByte();
        QueryType type = QueryType.fromCode(code);
        if (type == null) {
            throw new StoreProtocolException("unknown query type " + code);
        }
        switch (type) {
            case VALIDATE:
                return in.has(4) ? new StoreRequest.Validate(in.readIntLE()) : null;
            case SET: {
                String key = readKey(in);
                if (key == null) {
                    return null;
                }
                byte[] value = readValue(in);
                return value == null ? null : new StoreRequest.Set(key, value);
            }
            case GET: {
                String key = readKey(in);
                return key == null ? null : new StoreRequest.Get(key);
            }
            case ADD: {
                String key = readKey(in);
                if (key == null || !in.has(8)) {
                    return null;
                }
                return new StoreRequest.Add(key, in.readLongLE());
            }
            case CHECK: {
                List<String> keys = readKeyList(in);
                return keys == null ? null : new StoreRequest.Check(keys);
            }
            case WAIT: {
                List<String> keys = readKeyList(in);
                return keys == null ? null : new StoreRequest.Wait(keys);
            }
            case GETNUMKEYS:
                return new StoreRequest.GetNumKeys();
            case DELETE_KEY: {
                String key = readKey(in);
                return key == null ? null : new StoreRequest.DeleteKey(key);
            }
            case CANCEL_WAIT:
                return new StoreRequest.CancelWait();
            case PING:
                return in.has(4) ? new StoreRequest.Ping(in.readIntLE()) : null;
            case COMPARE_SET: {
                String key = readKey(in);
                byte[] expected = key == null ? null : readValue(in);
                byte[] desired = expected == null ? null : readValue(in);
                return desired == null ? null : new StoreRequest.CompareSet(key, expected, desired);
            }
            case APPEND: {
                String key = readKey(in);
                byte[] value = key == null ? null : readValue(in);
                return value == null ? null : new StoreRequest.Append(key, value);
            }
            case MULTI_GET: {
                List<String> keys = readKeyList(in);
                return keys == null ? null : new StoreRequest.MultiGet(keys);
            }
            case MULTI_SET:
                return readMultiSet(in);
            case QUEUE_PUSH: {
                String key = readKey(in);
                byte[] value = key == null ? null : readValue(in);
                return value == null ? null : new StoreRequest.QueuePush(key, value);
            }
            case QUEUE_POP: {
                String key = readKey(in);
                return key == null ? null : new StoreRequest.QueuePop(key);
            }
            case QUEUE_LEN: {
                String key = readKey(in);
                return key == null ? null : new StoreRequest.QueueLen(key);
            }
            case LIST_KEYS:
                return new StoreRequest.ListKeys();
            default:
                throw new StoreProtocolException("query type " + type + " is not supported by this store");
        }
    }

    /** MULTI_SET: int64 count, then count × (key, value). The whole frame is buffered before it applies. */
    private StoreRequest readMultiSet(FrameInput in) {
        if (!in.has(8)) {
            return null;
        }
        long count = in.readLongLE();
        checkKeyCount(count);
        List<String> keys = new ArrayList<>((int) Math.min(count, 1024));
        List<byte[]> values = new ArrayList<>((int) Math.min(count, 1024));
        for (long i = 0; i < count; i++) {
            String key = readKey(in);
            byte[] value = key == null ? null : readValue(in);
            if (value == null) {
                return null;
            }
            keys.add(key);
            values.add(value);
        }
        return new StoreRequest.MultiSet(keys, values);
    }

    private void checkKeyCount(long count) {
        if (count < 0 || count > limits.maxKeysPerRequest()) {
            throw new StoreProtocolException("request names " + Long.toUnsignedString(count)
                    + " keys, more than the limit of " + limits.maxKeysPerRequest());
        }
    }

    private String readKey(FrameInput in) {
        if (!in.has(8)) {
            return null;
        }
        long length = in.readLongLE();
        if (length < 0 || length > limits.maxKeyBytes()) {
            throw new StoreProtocolException(
                    "key of " + Long.toUnsignedString(length) + " bytes exceeds the limit of " + limits.maxKeyBytes());
        }
        if (!in.has(length)) {
            return null;
        }
        return in.readString((int) length, StandardCharsets.ISO_8859_1);
    }

    private byte[] readValue(FrameInput in) {
        if (!in.has(8)) {
            return null;
        }
        long length = in.readLongLE();
        if (length < 0 || length > limits.maxValueBytes()) {
            throw new StoreProtocolException("value of " + Long.toUnsignedString(length)
                    + " bytes exceeds the limit of " + limits.maxValueBytes());
        }
        if (!in.has(length)) {
            return null;
        }
        return in.readBytes((int) length);
    }

    private List<String> readKeyList(FrameInput in) {
        if (!in.has(8)) {
            return null;
        }
        long count = in.readLongLE();
        checkKeyCount(count);
        List<String> keys = new ArrayList<>((int) Math.min(count, 1024));
        for (long i = 0; i < count; i++) {
            String key = readKey(in);
            if (key == null) {
                return null;
            }
            keys.add(key);
        }
        return keys;
    }
}
