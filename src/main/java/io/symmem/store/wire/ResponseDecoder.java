package io.symmem.store.wire;

import io.symmem.store.StoreProtocolException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Client side: decodes the answer to one request. Returns null when the answer is not complete yet
 * (the caller rewinds the input); throws {@link StoreProtocolException} on an impossible answer.
 */
@FunctionalInterface
public interface ResponseDecoder<T> {

    T decode(FrameInput in);

    /** int64 answers: ADD, GETNUMKEYS, DELETE_KEY. */
    static ResponseDecoder<Long> int64() {
        return in -> in.has(8) ? in.readLongLE() : null;
    }

    /** WAIT and CANCEL_WAIT: one status byte. */
    static ResponseDecoder<Integer> uint8() {
        return in -> in.has(1) ? in.readUnsignedByte() : null;
    }

    /** PING: the uint32 nonce. */
    static ResponseDecoder<Integer> uint32() {
        return in -> in.has(4) ? in.readIntLE() : null;
    }

    /** CHECK: READY → true, NOT_READY → false. */
    static ResponseDecoder<Boolean> checkResult() {
        return in -> {
            if (!in.has(1)) {
                return null;
            }
            int answer = in.readUnsignedByte();
            if (answer == TcpStoreWire.CHECK_READY) {
                return Boolean.TRUE;
            }
            if (answer == TcpStoreWire.CHECK_NOT_READY) {
                return Boolean.FALSE;
            }
            throw new StoreProtocolException("CHECK answered " + answer + ", expected READY or NOT_READY");
        };
    }

    /** GET: uint64 length + bytes, bounded so a broken server cannot make us allocate without limit. */
    static ResponseDecoder<byte[]> value(int maxValueBytes) {
        return in -> {
            if (!in.has(8)) {
                return null;
            }
            long length = in.readLongLE();
            if (length < 0 || length > maxValueBytes) {
                throw new StoreProtocolException("GET answered a value of " + Long.toUnsignedString(length)
                        + " bytes, over the limit of " + maxValueBytes);
            }
            return in.has(length) ? in.readBytes((int) length) : null;
        };
    }

    /** MULTI_GET: {@code count} length-prefixed values. */
    static ResponseDecoder<List<byte[]>> values(int count, int maxValueBytes) {
        ResponseDecoder<byte[]> one = value(maxValueBytes);
        return in -> {
            List<byte[]> values = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                byte[] value = one.decode(in);
                if (value == null) {
                    return null;
                }
                values.add(value);
            }
            return values;
        };
    }

    /** QUEUE_POP: int64 length before the pop, then a value only if that length was positive. */
    static ResponseDecoder<Popped> popped(int maxValueBytes) {
        ResponseDecoder<byte[]> one = value(maxValueBytes);
        return in -> {
            if (!in.has(8)) {
                return null;
            }
            long length = in.readLongLE();
            if (length <= 0) {
                return new Popped(0, null);
            }
            byte[] value = one.decode(in);
            return value == null ? null : new Popped(length, value);
        };
    }

    /** LIST_KEYS: int64 count, then the wire keys as length-prefixed UTF-8 strings. */
    static ResponseDecoder<List<String>> keys(int maxKeyBytes, int maxKeys) {
        return in -> {
            if (!in.has(8)) {
                return null;
            }
            long count = in.readLongLE();
            if (count < 0 || count > maxKeys) {
                throw new StoreProtocolException("LIST_KEYS answered " + count + " keys, over the limit of " + maxKeys);
            }
            List<String> keys = new ArrayList<>((int) Math.min(count, 1024));
            for (long i = 0; i < count; i++) {
                if (!in.has(8)) {
                    return null;
                }
                long length = in.readLongLE();
                if (length < 0 || length > maxKeyBytes) {
                    throw new StoreProtocolException("LIST_KEYS answered a key of " + length + " bytes");
                }
                if (!in.has(length)) {
                    return null;
                }
                keys.add(in.readString((int) length, StandardCharsets.UTF_8));
            }
            return keys;
        };
    }
}
