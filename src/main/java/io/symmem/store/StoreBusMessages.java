package io.symmem.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The event-bus face's message format, shared by {@link StoreEventBusService} and {@link EventBusStore}.
 * Kept codec-light (only Vert.x's built-in codecs): the operation and its scalar arguments travel as
 * headers; a single value as a {@code Buffer} body; key lists and several values as a {@code JsonObject}
 * (values base64, as JsonObject encodes {@code byte[]}). See docs/store.md.
 */
public final class StoreBusMessages {

    /** The address every rank serves: its own store face (the host's data, or its client of the host). */
    public static final String ADDRESS = "symmem.store";

    public static final String OP = "op";
    public static final String KEY = "key";
    public static final String TIMEOUT_MS = "timeout-ms";
    public static final String DELTA = "delta";
    /**
     * Header of every request: its id, unique in this process. A {@code cancel} message with the same id
     * tells the service that the caller has gone, so that the operation is withdrawn (see
     * {@link StoreEventBusService}).
     */
    public static final String REQUEST_ID = "request-id";
    /** Reply header: "ok", or "error" with a JSON body {type, message, keys}. */
    public static final String STATUS = "status";
    public static final String OK = "ok";
    public static final String ERROR = "error";

    /** Error types in error replies. */
    public static final String ERROR_TIMEOUT = "timeout";
    public static final String ERROR_LIMIT = "limit";
    public static final String ERROR_BAD_INPUT = "bad-input";
    public static final String ERROR_STORE = "store";
    public static final String ERROR_CONNECTION_LOST = "connection-lost";

    /** Operation names (header {@value #OP}). */
    public enum Op {
        SET("set"), GET("get"), ADD("add"), AWAIT("await"), CHECK("check"), DELETE("delete"),
        COMPARE_SET("compare-set"), APPEND("append"), MULTI_GET("multi-get"), MULTI_SET("multi-set"),
        NUM_KEYS("num-keys"), LIST_KEYS("list-keys"), QUEUE_PUSH("queue-push"), QUEUE_POP("queue-pop"),
        QUEUE_LENGTH("queue-length"), PING("ping"),
        /** Not an operation: the request named by header {@value #REQUEST_ID} is no longer wanted. No reply. */
        CANCEL("cancel");

        private final String wireName;

        Op(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        static Op named(String name) {
            for (Op op : values()) {
                if (op.wireName.equals(name)) {
                    return op;
                }
            }
            return null;
        }
    }

    private static final java.util.concurrent.atomic.AtomicLong REQUEST_IDS = new java.util.concurrent.atomic.AtomicLong();

    private StoreBusMessages() {}

    /** A request id unique in this process (the event bus is local: clustering is not used). */
    static String nextRequestId() {
        return Long.toString(REQUEST_IDS.incrementAndGet());
    }

    static JsonObject keys(List<String> keys) {
        return new JsonObject().put("keys", new JsonArray(new ArrayList<>(keys)));
    }

    static List<String> keysOf(JsonObject body) {
        JsonArray array = body == null ? null : body.getJsonArray("keys");
        if (array == null) {
            throw new IllegalArgumentException("message body lacks \"keys\"");
        }
        List<String> keys = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            keys.add(array.getString(i));
        }
        return keys;
    }

    static JsonArray values(List<byte[]> values) {
        JsonArray array = new JsonArray();
        for (byte[] value : values) {
            array.add(value);
        }
        return array;
    }

    static List<byte[]> valuesOf(JsonArray array) {
        if (array == null) {
            throw new IllegalArgumentException("message body lacks \"values\"");
        }
        List<byte[]> values = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            values.add(array.getBinary(i));
        }
        return values;
    }

    /** The error reply body for a failure of the backing store. */
    static JsonObject error(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        String type;
        List<String> keys = List.of();
        if (cause instanceof StoreTimeoutException timeout) {
            type = ERROR_TIMEOUT;
            keys = timeout.keys();
        } else if (cause instanceof StoreLimitExceededException) {
            type = ERROR_LIMIT;
        } else if (cause instanceof IllegalArgumentException) {
            type = ERROR_BAD_INPUT;
        } else if (cause instanceof StoreConnectionLostException) {
            type = ERROR_CONNECTION_LOST;
        } else {
            type = ERROR_STORE;
        }
        return new JsonObject().put("type", type).put("message", String.valueOf(cause.getMessage()))
                .put("keys", new JsonArray(new ArrayList<>(keys)));
    }

    /** The exception an error reply stands for, so callers see the same types as with a direct store. */
    static RuntimeException exceptionOf(JsonObject error) {
        String message = error.getString("message", "store error");
        switch (error.getString("type", ERROR_STORE)) {
            case ERROR_TIMEOUT:
                return new StoreTimeoutException(message, keysOf(error));
            case ERROR_LIMIT:
                return new StoreLimitExceededException(message);
            case ERROR_BAD_INPUT:
                return new IllegalArgumentException(message);
            case ERROR_CONNECTION_LOST:
                return new StoreConnectionLostException(message);
            default:
                return new StoreException(message);
        }
    }
}
