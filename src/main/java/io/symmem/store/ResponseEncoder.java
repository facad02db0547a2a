package io.symmem.store;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Server side: builds TCPStore answer frames. SET, VALIDATE and CANCEL_WAIT-less paths send nothing. */
final class ResponseEncoder {

    private ResponseEncoder() {}

    /** GET: uint64 length + bytes. */
    static Buffer value(byte[] value) {
        return Buffer.buffer(8 + value.length).appendLongLE(value.length).appendBytes(value);
    }

    /** ADD (new value), GETNUMKEYS, DELETE_KEY (number deleted): int64. */
    static Buffer int64(long value) {
        return Buffer.buffer(8).appendLongLE(value);
    }

    /** CHECK: one byte, READY or NOT_READY. */
    static Buffer checkResult(boolean ready) {
        return Buffer.buffer(1).appendByte((byte) (ready ? TcpStoreWire.CHECK_READY : TcpStoreWire.CHECK_NOT_READY));
    }

    /** WAIT satisfied: one byte STOP_WAITING. */
    static Buffer stopWaiting() {
        return Buffer.buffer(1).appendByte((byte) TcpStoreWire.WAIT_STOP_WAITING);
    }

    /** CANCEL_WAIT acknowledged: one byte WAIT_CANCELED. */
    static Buffer waitCanceled() {
        return Buffer.buffer(1).appendByte((byte) TcpStoreWire.WAIT_CANCELED);
    }

    /** PING: the uint32 nonce echoed. */
    static Buffer pong(int nonce) {
        return Buffer.buffer(4).appendIntLE(nonce);
    }

    /** MULTI_GET: one length-prefixed value per key, in order. */
    static Buffer values(List<byte[]> values) {
        Buffer frame = Buffer.buffer();
        for (byte[] value : values) {
            frame.appendLongLE(value.length).appendBytes(value);
        }
        return frame;
    }

    /** QUEUE_POP: int64 queue length before the pop, then the value if there was one. */
    static Buffer popped(long lengthBefore, byte[] valueOrNull) {
        Buffer frame = Buffer.buffer().appendLongLE(lengthBefore);
        return valueOrNull == null ? frame : frame.appendLongLE(valueOrNull.length).appendBytes(valueOrNull);
    }

    /** LIST_KEYS: int64 count, then each wire key as a length-prefixed string (ISO-8859-1 = the original bytes). */
    static Buffer keys(List<String> keys) {
        Buffer frame = Buffer.buffer().appendLongLE(keys.size());
        for (String key : keys) {
            byte[] bytes = key.getBytes(StandardCharsets.ISO_8859_1);
            frame.appendLongLE(bytes.length).appendBytes(bytes);
        }
        return frame;
    }
}
