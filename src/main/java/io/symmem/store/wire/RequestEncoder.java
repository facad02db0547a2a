package io.symmem.store.wire;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Client side: builds TCPStore request frames. Keys passed here are wire keys (prefix included). */
public final class RequestEncoder {

    private RequestEncoder() {}

    public static Buffer validate() {
        return start(QueryType.VALIDATE).appendIntLE(TcpStoreWire.VALIDATION_MAGIC);
    }

    public static Buffer ping(int nonce) {
        return start(QueryType.PING).appendIntLE(nonce);
    }

    public static Buffer set(String key, byte[] value) {
        Buffer frame = start(QueryType.SET);
        appendKey(frame, key);
        return frame.appendLongLE(value.length).appendBytes(value);
    }

    public static Buffer get(String key) {
        return appendKey(start(QueryType.GET), key);
    }

    public static Buffer add(String key, long delta) {
        return appendKey(start(QueryType.ADD), key).appendLongLE(delta);
    }

    public static Buffer check(List<String> keys) {
        return appendKeyList(start(QueryType.CHECK), keys);
    }

    public static Buffer waitFor(List<String> keys) {
        return appendKeyList(start(QueryType.WAIT), keys);
    }

    public static Buffer cancelWait() {
        return start(QueryType.CANCEL_WAIT);
    }

    public static Buffer getNumKeys() {
        return start(QueryType.GETNUMKEYS);
    }

    public static Buffer deleteKey(String key) {
        return appendKey(start(QueryType.DELETE_KEY), key);
    }

    public static Buffer compareSet(String key, byte[] expected, byte[] desired) {
        Buffer frame = appendKey(start(QueryType.COMPARE_SET), key);
        appendBytes(frame, expected);
        return appendBytes(frame, desired);
    }

    public static Buffer append(String key, byte[] value) {
        return appendBytes(appendKey(start(QueryType.APPEND), key), value);
    }

    public static Buffer multiGet(List<String> keys) {
        return appendKeyList(start(QueryType.MULTI_GET), keys);
    }

    /** MULTI_SET counts with an int64 (TCPStore's client does; CHECK/WAIT/MULTI_GET use uint64, same bytes). */
    public static Buffer multiSet(List<String> keys, List<byte[]> values) {
        Buffer frame = start(QueryType.MULTI_SET).appendLongLE(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            appendKey(frame, keys.get(i));
            appendBytes(frame, values.get(i));
        }
        return frame;
    }

    public static Buffer queuePush(String key, byte[] value) {
        return appendBytes(appendKey(start(QueryType.QUEUE_PUSH), key), value);
    }

    public static Buffer queuePop(String key) {
        return appendKey(start(QueryType.QUEUE_POP), key);
    }

    public static Buffer queueLength(String key) {
        return appendKey(start(QueryType.QUEUE_LEN), key);
    }

    public static Buffer listKeys() {
        return start(QueryType.LIST_KEYS);
    }

    /** Wire size of a key, for checking it against the limits before sending. */
    public static int keyBytes(String key) {
        return key.getBytes(StandardCharsets.UTF_8).length;
    }

    private static Buffer start(QueryType type) {
        return Buffer.buffer().appendByte((byte) type.code());
    }

    private static Buffer appendKey(Buffer frame, String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        return frame.appendLongLE(bytes.length).appendBytes(bytes);
    }

    private static Buffer appendBytes(Buffer frame, byte[] value) {
        return frame.appendLongLE(value.length).appendBytes(value);
    }

    private static Buffer appendKeyList(Buffer frame, List<String> keys) {
        frame.appendLongLE(keys.size());
        for (String key : keys) {
            appendKey(frame, key);
        }
        return frame;
    }
}
