package io.symmem.store.wire;

/**
 * TCPStore's query types. The ordinal IS the wire code (one unsigned byte), so the order below
 * must never change: it mirrors c10d's {@code QueryType} enum.
 */
public enum QueryType {
    VALIDATE,
    SET,
    COMPARE_SET,
    GET,
    ADD,
    CHECK,
    WAIT,
    GETNUMKEYS,
    DELETE_KEY,
    APPEND,
    MULTI_GET,
    MULTI_SET,
    CANCEL_WAIT,
    PING,
    QUEUE_PUSH,
    QUEUE_POP,
    QUEUE_LEN,
    LIST_KEYS;

    private static final QueryType[] BY_CODE = values();

    int code() {
        return ordinal();
    }

    /** The type for a wire code, or null when the code is unknown. */
    static QueryType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
