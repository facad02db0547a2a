package io.symmem.store.wire;

import io.vertx.core.buffer.Buffer;

/**
 * Server side: builds the small TCPStore answer frames. Answers that carry values or keys (GET,
 * COMPARE_SET, MULTI_GET, QUEUE_POP, LIST_KEYS) are encoded by the server's answer queue as the socket
 * takes them. SET, APPEND, MULTI_SET, QUEUE_PUSH and VALIDATE have no answer.
 */
public final class ResponseEncoder {

    private ResponseEncoder() {}

    /** ADD (new value), GETNUMKEYS, DELETE_KEY (number deleted): int64. */
    public static Buffer int64(long value) {
        return Buffer.buffer(8).appendLongLE(value);
    }

    /** CHECK: one byte, READY or NOT_READY. */
    public static Buffer checkResult(boolean ready) {
        return Buffer.buffer(1).appendByte((byte) (ready ? TcpStoreWire.CHECK_READY : TcpStoreWire.CHECK_NOT_READY));
    }

    /** WAIT satisfied: one byte STOP_WAITING. */
    public static Buffer stopWaiting() {
        return Buffer.buffer(1).appendByte((byte) TcpStoreWire.WAIT_STOP_WAITING);
    }

    /** CANCEL_WAIT acknowledged: one byte WAIT_CANCELED. */
    public static Buffer waitCanceled() {
        return Buffer.buffer(1).appendByte((byte) TcpStoreWire.WAIT_CANCELED);
    }

    /** PING: the uint32 nonce echoed. */
    public static Buffer pong(int nonce) {
        return Buffer.buffer(4).appendIntLE(nonce);
    }
}
