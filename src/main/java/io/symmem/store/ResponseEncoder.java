package io.symmem.store;

import io.vertx.core.buffer.Buffer;

/**
 * Server side: builds the small TCPStore answer frames. Answers that carry values or keys (GET,
 * COMPARE_SET, MULTI_GET, QUEUE_POP, LIST_KEYS) are encoded by {@link AnswerPart} as the socket
 * takes them. SET, APPEND, MULTI_SET, QUEUE_PUSH and VALIDATE have no answer.
 */
final class ResponseEncoder {

    private ResponseEncoder() {}

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
}
