package io.symmem.store.wire;

import java.util.List;

/** One decoded client→server frame. Keys are the exact wire keys (prefix included). */
public sealed interface StoreRequest {

    QueryType type();

    record Validate(int magic) implements StoreRequest {
        public QueryType type() { return QueryType.VALIDATE; }
    }

    record Set(String key, byte[] value) implements StoreRequest {
        public QueryType type() { return QueryType.SET; }
    }

    record Get(String key) implements StoreRequest {
        public QueryType type() { return QueryType.GET; }
    }

    record Add(String key, long delta) implements StoreRequest {
        public QueryType type() { return QueryType.ADD; }
    }

    record Check(List<String> keys) implements StoreRequest {
        public QueryType type() { return QueryType.CHECK; }
    }

    record Wait(List<String> keys) implements StoreRequest {
        public QueryType type() { return QueryType.WAIT; }
    }

    record GetNumKeys() implements StoreRequest {
        public QueryType type() { return QueryType.GETNUMKEYS; }
    }

    record DeleteKey(String key) implements StoreRequest {
        public QueryType type() { return QueryType.DELETE_KEY; }
    }

    record CancelWait() implements StoreRequest {
        public QueryType type() { return QueryType.CANCEL_WAIT; }
    }

    record Ping(int nonce) implements StoreRequest {
        public QueryType type() { return QueryType.PING; }
    }

    record CompareSet(String key, byte[] expected, byte[] desired) implements StoreRequest {
        public QueryType type() { return QueryType.COMPARE_SET; }
    }

    record Append(String key, byte[] value) implements StoreRequest {
        public QueryType type() { return QueryType.APPEND; }
    }

    record MultiGet(List<String> keys) implements StoreRequest {
        public QueryType type() { return QueryType.MULTI_GET; }
    }

    /** Keys and values at the same index. */
    record MultiSet(List<String> keys, List<byte[]> values) implements StoreRequest {
        public QueryType type() { return QueryType.MULTI_SET; }
    }

    record QueuePush(String key, byte[] value) implements StoreRequest {
        public QueryType type() { return QueryType.QUEUE_PUSH; }
    }

    record QueuePop(String key) implements StoreRequest {
        public QueryType type() { return QueryType.QUEUE_POP; }
    }

    record QueueLen(String key) implements StoreRequest {
        public QueryType type() { return QueryType.QUEUE_LEN; }
    }

    record ListKeys() implements StoreRequest {
        public QueryType type() { return QueryType.LIST_KEYS; }
    }
}
