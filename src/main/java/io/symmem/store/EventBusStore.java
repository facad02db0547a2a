package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The {@link Store} every component inside a rank uses: each operation is a request to the rank's
 * {@link StoreEventBusService} at {@link StoreBusMessages#ADDRESS}, which runs it on the host's data
 * or forwards it to the rank's TCP client. Errors arrive as the same exception types a direct store
 * raises ({@link StoreTimeoutException} with its keys, {@link StoreLimitExceededException}, ...).
 *
 * <p>Send timeouts: an operation that waits is sent with its own deadline plus {@link #WAIT_SLACK}, so
 * that it fails with the store's message naming the keys, never with a bare reply timeout; other
 * operations use {@code operationTimeout}. Like the other stores, the operation starts when the method
 * is called. {@link #close()} does nothing: the service and its backend belong to the rank.
 *
 * <p>A caller that gives up does not leave its operation behind: cancelling the Uni, or the reply not
 * coming within the send timeout, sends a {@code cancel} for the request, and the service withdraws it
 * from the store behind it (a wait is cancelled, a request not sent yet is never sent).
 */
public final class EventBusStore implements Store {

    /** Above a wait's deadline: the TCP client may take up to its cancel grace to report a timeout. */
    static final Duration WAIT_SLACK = TcpStoreClient.CANCEL_GRACE.plusSeconds(1);

    private final Vertx vertx;
    private final String address;
    private final String description;
    private final Duration operationTimeout;

    /**
     * @param description where the store really is (e.g. "127.0.0.1:29500"), for error messages
     * @param operationTimeout send timeout of operations that do not wait
     */
    public EventBusStore(Vertx vertx, String description, Duration operationTimeout) {
        this(vertx, StoreBusMessages.ADDRESS, description, operationTimeout);
    }

    public EventBusStore(Vertx vertx, String address, String description, Duration operationTimeout) {
        this.vertx = Objects.requireNonNull(vertx, "vertx must not be null");
        this.address = Objects.requireNonNull(address, "address must not be null");
        this.description = Objects.requireNonNull(description, "description must not be null");
        this.operationTimeout = Objects.requireNonNull(operationTimeout, "operationTimeout must not be null");
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return send(StoreBusMessages.Op.SET, key, null, buffer(value)).replaceWithVoid();
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return send(StoreBusMessages.Op.GET, key, timeout, null).map(EventBusStore::bytes);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return send(options(StoreBusMessages.Op.ADD, key, null).addHeader(StoreBusMessages.DELTA, Long.toString(delta)), null, null)
                .map(Long.class::cast);
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return send(StoreBusMessages.Op.AWAIT, null, timeout, keysBody(keys)).replaceWithVoid();
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return send(StoreBusMessages.Op.CHECK, null, null, keysBody(keys)).map(Boolean.class::cast);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return send(StoreBusMessages.Op.DELETE, key, null, null).map(Boolean.class::cast);
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        if (expected == null || desired == null) {
            return Uni.createFrom().failure(new IllegalArgumentException("expected and desired must not be null"));
        }
        JsonObject body = new JsonObject().put("expected", expected).put("desired", desired);
        return send(StoreBusMessages.Op.COMPARE_SET, key, null, body).map(EventBusStore::bytes);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return send(StoreBusMessages.Op.APPEND, key, null, buffer(value)).replaceWithVoid();
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return send(StoreBusMessages.Op.MULTI_GET, null, timeout, keysBody(keys))
                .map(reply -> StoreBusMessages.valuesOf(((JsonObject) reply).getJsonArray("values")));
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        if (keys == null || values == null || values.stream().anyMatch(java.util.Objects::isNull)) {
            return Uni.createFrom().failure(new IllegalArgumentException("keys and values must not be null"));
        }
        JsonObject body = StoreBusMessages.keys(keys).put("values", StoreBusMessages.values(values));
        return send(StoreBusMessages.Op.MULTI_SET, null, null, body).replaceWithVoid();
    }

    @Override
    public Uni<Long> numKeys() {
        return send(StoreBusMessages.Op.NUM_KEYS, null, null, null).map(Long.class::cast);
    }

    @Override
    public Uni<List<String>> listKeys() {
        return send(StoreBusMessages.Op.LIST_KEYS, null, null, null).map(reply -> StoreBusMessages.keysOf((JsonObject) reply));
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return send(StoreBusMessages.Op.QUEUE_PUSH, key, null, buffer(value)).replaceWithVoid();
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return send(StoreBusMessages.Op.QUEUE_POP, key, timeout, null).map(EventBusStore::bytes);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return send(StoreBusMessages.Op.QUEUE_LENGTH, key, null, null).map(Long.class::cast);
    }

    @Override
    public Uni<Void> ping() {
        return send(StoreBusMessages.Op.PING, null, null, null).replaceWithVoid();
    }

    @Override
    public void close() {
        // The service and the store behind it belong to the rank.
    }

    // ---- plumbing ---------------------------------------------------------------------------

    private DeliveryOptions options(StoreBusMessages.Op op, String key, Duration waitTimeout) {
        DeliveryOptions options = new DeliveryOptions().addHeader(StoreBusMessages.OP, op.wireName());
        if (key != null) {
            options.addHeader(StoreBusMessages.KEY, key);
        }
        if (waitTimeout != null) {
            options.addHeader(StoreBusMessages.TIMEOUT_MS, Long.toString(waitTimeout.toMillis()));
            options.setSendTimeout(waitTimeout.plus(WAIT_SLACK).toMillis());
        } else {
            options.setSendTimeout(operationTimeout.toMillis());
        }
        return options;
    }

    private Uni<Object> send(StoreBusMessages.Op op, String key, Duration waitTimeout, Object body) {
        if (key == null && needsKey(op)) {
            return Uni.createFrom().failure(new IllegalArgumentException("key must not be null"));
        }
        if (waitTimeout != null && waitTimeout.isNegative()) {
            return Uni.createFrom().failure(new IllegalArgumentException("timeout must not be negative"));
        }
        return send(options(op, key, waitTimeout), body, op);
    }

    private Uni<Object> send(DeliveryOptions options, Object body, StoreBusMessages.Op opOrNull) {
        String op = options.getHeaders().get(StoreBusMessages.OP);
        String id = StoreBusMessages.nextRequestId();
        options.addHeader(StoreBusMessages.REQUEST_ID, id);
        // Started now, not on subscription, like every Store of this package.
        var reply = vertx.eventBus().<Object>request(address, body, options).toCompletionStage().toCompletableFuture();
        return Uni.createFrom().completionStage(reply).onFailure().transform(e -> transportFailure(op, options, e, id))
                .map(this::unwrap)
                .onCancellation().invoke(() -> cancel(id));
    }

    /** The caller of request {@code id} has gone: the service withdraws it (no reply to this message). */
    private void cancel(String id) {
        vertx.eventBus().send(address, null, new DeliveryOptions()
                .addHeader(StoreBusMessages.OP, StoreBusMessages.Op.CANCEL.wireName())
                .addHeader(StoreBusMessages.REQUEST_ID, id));
    }

    private Object unwrap(Message<Object> reply) {
        if (StoreBusMessages.ERROR.equals(reply.headers().get(StoreBusMessages.STATUS))) {
            throw StoreBusMessages.exceptionOf((JsonObject) reply.body());
        }
        return reply.body();
    }

    private Throwable transportFailure(String op, DeliveryOptions options, Throwable failure, String id) {
        if (failure instanceof ReplyException reply) {
            String key = options.getHeaders().get(StoreBusMessages.KEY);
            String what = op + (key == null ? "" : " of key '" + key + "'");
            if (reply.failureType() == ReplyFailure.NO_HANDLERS) {
                return new StoreException("store " + description + " is not reachable: nothing serves event-bus address "
                        + address + " (" + what + ")", failure);
            }
            if (reply.failureType() == ReplyFailure.TIMEOUT) {
                // The caller is told it failed, so the operation must not go on (or be sent later).
                cancel(id);
                return new StoreException("store " + description + ": no answer to " + what + " within "
                        + options.getSendTimeout() + " ms", failure);
            }
            return new StoreException("store " + description + ": " + what + " failed: " + reply.getMessage(), failure);
        }
        return failure;
    }

    private static boolean needsKey(StoreBusMessages.Op op) {
        switch (op) {
            case SET: case GET: case ADD: case DELETE: case COMPARE_SET: case APPEND:
            case QUEUE_PUSH: case QUEUE_POP: case QUEUE_LENGTH:
                return true;
            default:
                return false;
        }
    }

    private static Buffer buffer(byte[] value) {
        return value == null ? null : Buffer.buffer(value);
    }

    private static JsonObject keysBody(List<String> keys) {
        return keys == null ? null : StoreBusMessages.keys(keys);
    }

    private static byte[] bytes(Object reply) {
        return ((Buffer) reply).getBytes();
    }
}
