package io.symmem;

import io.smallrye.mutiny.Uni;
import io.symmem.store.Store;
import java.time.Duration;
import java.util.List;

/**
 * The world's store as handed to library code: every operation reaches the world's store, but
 * closing it does nothing, since the world owns the connection (a try-with-resources around it must
 * not cut the rank off its peers).
 */
final class SharedStore implements Store {
    private final Store store;

    SharedStore(Store store) {
        this.store = store;
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return store.set(key, value);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return store.get(key, timeout);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return store.add(key, delta);
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return store.await(keys, timeout);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return store.check(keys);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return store.delete(key);
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return store.compareSet(key, expected, desired);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return store.append(key, value);
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return store.multiGet(keys, timeout);
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return store.multiSet(keys, values);
    }

    @Override
    public Uni<Long> numKeys() {
        return store.numKeys();
    }

    @Override
    public Uni<List<String>> listKeys() {
        return store.listKeys();
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return store.queuePush(key, value);
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return store.queuePop(key, timeout);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return store.queueLength(key);
    }

    @Override
    public Uni<Void> ping() {
        return store.ping();
    }

    @Override
    public String describe() {
        return store.describe();
    }

    @Override
    public void close() {
        // The world's connection: closed with the world.
    }
}
