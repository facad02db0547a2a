package io.symmem.liveness;

import io.smallrye.mutiny.Uni;
import io.symmem.store.Store;
import java.time.Duration;
import java.util.List;

/**
 * A store whose waits end as soon as the world fails ({@link Liveness#guard}): a rank waiting for a
 * key that a dead peer would have set learns at once, not at the wait's deadline. Operations that do
 * not wait end at once only when the store itself is lost (a client would otherwise keep them until
 * it gives up reconnecting); while the store is there they still work.
 */
public final class GuardedStore implements Store {
    private final Store store;
    private final Liveness liveness;

    public GuardedStore(Store store, Liveness liveness) {
        this.store = store;
        this.liveness = liveness;
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return liveness.guard(store.get(key, timeout), "store wait for key '" + key + "'");
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return liveness.guard(store.await(keys, timeout), "store wait for " + describeKeys(keys));
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return liveness.guard(store.multiGet(keys, timeout), "store wait for " + describeKeys(keys));
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return liveness.guard(store.queuePop(key, timeout), "store wait on queue '" + key + "'");
    }

    private static String describeKeys(List<String> keys) {
        if (keys.size() == 1) {
            return "key '" + keys.get(0) + "'";
        }
        return keys.size() + " keys (first '" + (keys.isEmpty() ? "" : keys.get(0)) + "')";
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return liveness.guardAgainstLostStore(store.set(key, value), "store set of key '" + key + "'");
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return liveness.guardAgainstLostStore(store.add(key, delta), "store add to key '" + key + "'");
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return liveness.guardAgainstLostStore(store.check(keys), "store check of " + describeKeys(keys));
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return liveness.guardAgainstLostStore(store.delete(key), "store delete of key '" + key + "'");
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return liveness.guardAgainstLostStore(store.compareSet(key, expected, desired), "store compare-set of key '" + key + "'");
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return liveness.guardAgainstLostStore(store.append(key, value), "store append to key '" + key + "'");
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return liveness.guardAgainstLostStore(store.multiSet(keys, values), "store multi-set of " + describeKeys(keys));
    }

    @Override
    public Uni<Long> numKeys() {
        return liveness.guardAgainstLostStore(store.numKeys(), "store key count");
    }

    @Override
    public Uni<List<String>> listKeys() {
        return liveness.guardAgainstLostStore(store.listKeys(), "store key listing");
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return liveness.guardAgainstLostStore(store.queuePush(key, value), "store push to queue '" + key + "'");
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return liveness.guardAgainstLostStore(store.queueLength(key), "store length of queue '" + key + "'");
    }

    @Override
    public Uni<Void> ping() {
        return liveness.guardAgainstLostStore(store.ping(), "store ping");
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        store.close();
    }
}
