package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.server.LocalStore;
import io.symmem.store.server.StoreStats;
import io.vertx.core.Vertx;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class EventBusAndPrefixStoreTest extends StoreServerTest {

    @Test
    void aWaitOverTheBusFailsWithTheStoresMessageNotAReplyTimeout() {
        String address = "symmem.store.wait-test";
        StoreEventBusService service = new StoreEventBusService(vertx, server.localStore(), address);
        service.register().await().atMost(AWAIT);
        try {
            // A short default send timeout must not cut a longer wait short.
            EventBusStore store = new EventBusStore(vertx, address, server.address(), Duration.ofMillis(100));
            assertThatThrownBy(() -> store.await(List.of("x", "y"), Duration.ofMillis(400)).await().atMost(AWAIT))
                    .isInstanceOf(StoreTimeoutException.class)
                    .hasMessageContaining(server.address())
                    .satisfies(e -> assertThat(((StoreTimeoutException) e).keys()).containsExactly("x", "y"));
        } finally {
            service.close();
        }
    }

    @Test
    void aWaitCancelledByItsCallerIsWithdrawnFromTheStoreBehindTheBus() {
        String address = "symmem.store.cancel-test";
        StoreEventBusService service = new StoreEventBusService(vertx, server.localStore(), address);
        service.register().await().atMost(AWAIT);
        try {
            EventBusStore store = new EventBusStore(vertx, address, server.address(), Duration.ofSeconds(5));
            StoreTestSupport.Subscribed<byte[]> abandoned = StoreTestSupport.subscribe(store.get("never", Duration.ofMinutes(5)));
            StoreTestSupport.awaitPendingWaits(server, 1);
            abandoned.cancel();
            StoreTestSupport.awaitPendingWaits(server, 0);
            awaitCondition(() -> service.runningCount() == 0, "the service still tracks the cancelled request");
        } finally {
            service.close();
        }
    }

    @Test
    void anOperationWhoseReplyTimedOutIsCancelledBehindTheBus() {
        String address = "symmem.store.stuck";
        AtomicBoolean cancelled = new AtomicBoolean();
        StoreEventBusService service = new StoreEventBusService(vertx, neverAnswering(cancelled), address);
        service.register().await().atMost(AWAIT);
        try {
            EventBusStore store = new EventBusStore(vertx, address, "stuck:1", Duration.ofMillis(200));
            assertThatThrownBy(() -> store.add("n", 1).await().atMost(AWAIT))
                    .isInstanceOf(StoreException.class).hasMessageContaining("no answer to add of key 'n'");
            // Its caller was told it failed: the operation must not stay behind to be applied later.
            awaitCondition(cancelled::get, "the timed-out add was not cancelled behind the bus");
            awaitCondition(() -> service.runningCount() == 0, "the service still tracks the timed-out request");
        } finally {
            service.close();
        }
    }

    /** A store whose every operation never ends, noting when one is cancelled. */
    private static Store neverAnswering(AtomicBoolean cancelled) {
        return (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "describe":
                case "toString":
                    return "stuck:1";
                case "close":
                    return null;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                default:
                    return Uni.createFrom().nothing().onCancellation().invoke(() -> cancelled.set(true));
            }
        });
    }

    private static void awaitCondition(BooleanSupplier condition, String failure) {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(failure);
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void unregisteredServiceMeansStoreNotReachable() {
        String address = "symmem.store.gone";
        StoreEventBusService service = new StoreEventBusService(vertx, server.localStore(), address);
        service.register().await().atMost(AWAIT);
        EventBusStore store = new EventBusStore(vertx, address, server.address(), Duration.ofSeconds(1));
        store.set("k", bytes("v")).await().atMost(AWAIT);
        service.unregister().await().atMost(AWAIT);
        assertThatThrownBy(() -> store.get("k", AWAIT).await().atMost(AWAIT))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("not reachable")
                .hasMessageContaining(server.address());
    }

    @Test
    void errorsCrossTheBusWithTheirTypes() {
        String address = "symmem.store.errors";
        StoreEventBusService service = new StoreEventBusService(vertx, server.localStore(), address);
        service.register().await().atMost(AWAIT);
        try {
            EventBusStore store = new EventBusStore(vertx, address, server.address(), Duration.ofSeconds(1));
            store.set("text", bytes("abc")).await().atMost(AWAIT);
            assertThatThrownBy(() -> store.add("text", 1).await().atMost(AWAIT)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("text");
            assertThatThrownBy(() -> store.set("k".repeat(5000), bytes("v")).await().atMost(AWAIT))
                    .isInstanceOf(StoreLimitExceededException.class);
        } finally {
            service.close();
        }
    }

    @Test
    void prefixStoresNestAndListOnlyTheirOwnKeys() {
        LocalStore root = server.localStore();
        PrefixStore outer = new PrefixStore("job", root);
        PrefixStore inner = new PrefixStore("step1", outer);
        inner.set("k", bytes("v")).await().atMost(AWAIT);
        outer.set("other", bytes("o")).await().atMost(AWAIT);
        assertThat(text(root.get("job/step1/k", AWAIT).await().atMost(AWAIT))).isEqualTo("v");
        assertThat(inner.listKeys().await().atMost(AWAIT)).containsExactly("k");
        assertThat(outer.listKeys().await().atMost(AWAIT)).containsExactlyInAnyOrder("step1/k", "other");
        assertThat(inner.numKeys().await().atMost(AWAIT)).isEqualTo(2);
        assertThatThrownBy(() -> inner.get("missing", Duration.ofMillis(100)).await().atMost(AWAIT))
                .isInstanceOf(StoreTimeoutException.class).hasMessageContaining("job/step1/missing");
        inner.close();
        root.ping().await().atMost(AWAIT);
    }

    @Test
    void statsCountOperationsFromEveryFace() {
        LocalStore local = server.localStore();
        local.set("a", bytes("1")).await().atMost(AWAIT);
        local.add("n", 1).await().atMost(AWAIT);
        StoreStats stats = server.stats().await().atMost(AWAIT);
        assertThat(stats.keys()).isEqualTo(2);
        assertThat(stats.opsServed()).containsEntry("SET", 1L).containsEntry("ADD", 1L);
    }

    @Test
    void closingALocalStoreFailsItsWaitsButNotTheServer() {
        LocalStore local = server.localStore();
        var pending = local.get("never", Duration.ofSeconds(10)).subscribeAsCompletionStage();
        local.close();
        assertThatThrownBy(() -> pending.get(5, java.util.concurrent.TimeUnit.SECONDS)).hasCauseInstanceOf(StoreException.class);
        server.localStore().set("still", bytes("up")).await().atMost(AWAIT);
    }
}
