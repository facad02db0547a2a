package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.server.LocalStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Serves a {@link Store} on the event bus at {@link StoreBusMessages#ADDRESS}: the rank that hosts the
 * data serves its {@link LocalStore}; every other rank serves its {@link SideConnectionStore} (one pipelined
 * {@link TcpStoreClient}, waits and ADDs on side connections).
 * Components then use an {@link EventBusStore} and never care which. Message format: see
 * {@link StoreBusMessages} and docs/store.md.
 *
 * <p>Operations in progress are kept by request id until they end, so that a {@code cancel} message
 * (the caller gave up) cancels the backend's operation: the backend then withdraws it (a wait is
 * cancelled in the store, a request not sent yet is never sent). A cancelled request gets no reply.
 */
public final class StoreEventBusService implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(StoreEventBusService.class);

    private final Vertx vertx;
    private final Store backend;
    private final String address;
    private MessageConsumer<Object> consumer;
    /** Operations in progress by request id; completions come on the backend's threads. */
    private final Map<String, Cancellable> running = new ConcurrentHashMap<>();

    public StoreEventBusService(Vertx vertx, Store backend) {
        this(vertx, backend, StoreBusMessages.ADDRESS);
    }

    /** A service on another address (tests run several in one Vert.x). */
    public StoreEventBusService(Vertx vertx, Store backend, String address) {
        this.vertx = Objects.requireNonNull(vertx, "vertx must not be null");
        this.backend = Objects.requireNonNull(backend, "backend must not be null");
        this.address = Objects.requireNonNull(address, "address must not be null");
    }

    public String address() {
        return address;
    }

    /** Registers the consumer; the Uni completes once the registration is in effect. */
    public synchronized Uni<Void> register() {
        if (consumer != null) {
            throw new IllegalStateException("store service already registered at " + address);
        }
        consumer = vertx.eventBus().consumer(address, this::handle);
        LOG.debugf("store service for %s registered at event-bus address %s", backend.describe(), address);
        io.vertx.core.Promise<Void> registered = io.vertx.core.Promise.promise();
        consumer.completionHandler(registered);
        return fromFuture(registered.future());
    }

    /** Unregisters the consumer; later sends fail with "no handlers". The backend is not closed. */
    public synchronized Uni<Void> unregister() {
        if (consumer == null) {
            return Uni.createFrom().voidItem();
        }
        MessageConsumer<Object> registered = consumer;
        consumer = null;
        return fromFuture(registered.unregister());
    }

    /** Blocking {@link #unregister()}; do not call it from an event-loop thread. */
    @Override
    public void close() {
        unregister().await().atMost(Duration.ofSeconds(5));
    }

    private void handle(Message<Object> message) {
        String id = message.headers().get(StoreBusMessages.REQUEST_ID);
        if (StoreBusMessages.Op.CANCEL.wireName().equals(message.headers().get(StoreBusMessages.OP))) {
            Cancellable operation = id == null ? null : running.remove(id);
            if (operation != null) {
                operation.cancel();
            }
            return;
        }
        Uni<?> outcome;
        try {
            outcome = dispatch(message);
        } catch (RuntimeException e) {
            replyError(message, e);
            return;
        }
        if (id != null) {
            // Registered on subscription, which comes before any outcome, and removed on every ending.
            outcome = outcome.onSubscription().invoke(subscription -> running.put(id, subscription))
                    .onTermination().invoke(() -> running.remove(id));
        }
        outcome.subscribe().with(result -> replyOk(message, result), failure -> replyError(message, failure));
    }

    /** Operations started and not ended yet (for tests). */
    int runningCount() {
        return running.size();
    }

    private Uni<?> dispatch(Message<Object> message) {
        String opName = message.headers().get(StoreBusMessages.OP);
        StoreBusMessages.Op op = StoreBusMessages.Op.named(opName);
        if (op == null) {
            throw new IllegalArgumentException("unknown store operation '" + opName + "'");
        }
        String key = message.headers().get(StoreBusMessages.KEY);
        switch (op) {
            case SET:
                return backend.set(key, bytesOf(message.body()));
            case GET:
                return backend.get(key, timeoutOf(message)).map(Buffer::buffer);
            case ADD:
                return backend.add(key, longHeader(message, StoreBusMessages.DELTA));
            case AWAIT:
                return backend.await(StoreBusMessages.keysOf(json(message)), timeoutOf(message));
            case CHECK:
                return backend.check(StoreBusMessages.keysOf(json(message)));
            case DELETE:
                return backend.delete(key);
            case COMPARE_SET: {
                JsonObject body = json(message);
                return backend.compareSet(key, binary(body, "expected"), binary(body, "desired")).map(Buffer::buffer);
            }
            case APPEND:
                return backend.append(key, bytesOf(message.body()));
            case MULTI_GET:
                return backend.multiGet(StoreBusMessages.keysOf(json(message)), timeoutOf(message))
                        .map(values -> new JsonObject().put("values", StoreBusMessages.values(values)));
            case MULTI_SET: {
                JsonObject body = json(message);
                return backend.multiSet(StoreBusMessages.keysOf(body), StoreBusMessages.valuesOf(body.getJsonArray("values")));
            }
            case NUM_KEYS:
                return backend.numKeys();
            case LIST_KEYS:
                return backend.listKeys().map(StoreBusMessages::keys);
            case QUEUE_PUSH:
                return backend.queuePush(key, bytesOf(message.body()));
            case QUEUE_POP:
                return backend.queuePop(key, timeoutOf(message)).map(Buffer::buffer);
            case QUEUE_LENGTH:
                return backend.queueLength(key);
            case PING:
                return backend.ping();
            case CANCEL: // handled before dispatch
            default:
                throw new IllegalArgumentException("unhandled store operation " + op);
        }
    }

    private static void replyOk(Message<Object> message, Object result) {
        message.reply(result, new DeliveryOptions().addHeader(StoreBusMessages.STATUS, StoreBusMessages.OK));
    }

    private static void replyError(Message<Object> message, Throwable failure) {
        message.reply(StoreBusMessages.error(failure),
                new DeliveryOptions().addHeader(StoreBusMessages.STATUS, StoreBusMessages.ERROR));
    }

    private static byte[] bytesOf(Object body) {
        if (body instanceof Buffer buffer) {
            return buffer.getBytes();
        }
        if (body instanceof byte[] bytes) {
            return bytes;
        }
        throw new IllegalArgumentException("value must be sent as a Buffer body");
    }

    private static JsonObject json(Message<Object> message) {
        if (message.body() instanceof JsonObject body) {
            return body;
        }
        throw new IllegalArgumentException("operation " + message.headers().get(StoreBusMessages.OP) + " needs a JsonObject body");
    }

    private static byte[] binary(JsonObject body, String field) {
        byte[] value = body.getBinary(field);
        if (value == null) {
            throw new IllegalArgumentException("compare-set needs \"" + field + "\" (base64)");
        }
        return value;
    }

    private static Duration timeoutOf(Message<Object> message) {
        return Duration.ofMillis(longHeader(message, StoreBusMessages.TIMEOUT_MS));
    }

    private static long longHeader(Message<Object> message, String name) {
        String text = message.headers().get(name);
        if (text == null) {
            throw new IllegalArgumentException("header '" + name + "' is missing");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("header '" + name + "' is not an integer: " + text);
        }
    }

    private static <T> Uni<T> fromFuture(Future<T> future) {
        return Uni.createFrom().completionStage(future.toCompletionStage());
    }
}
