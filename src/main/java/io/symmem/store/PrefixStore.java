package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A view of another store in which every key is {@code "<prefix>/<key>"}, as c10d's PrefixStore, so
 * that components (and groups) share one store without key clashes. Views nest: a view of a view
 * prefixes twice ({@code "outer/inner/key"}). {@link #listKeys()} shows only this view's keys, without
 * the prefix; {@link #numKeys()} counts the whole underlying store, as c10d's does.
 *
 * <p>Closing a view does nothing: the underlying store belongs to whoever created it.
 */
public final class PrefixStore implements Store {

    private final String prefix;
    private final Store inner;

    public PrefixStore(String prefix, Store inner) {
        Objects.requireNonNull(prefix, "prefix must not be null");
        this.inner = Objects.requireNonNull(inner, "inner store must not be null");
        if (prefix.isEmpty()) {
            throw new IllegalArgumentException("prefix must not be empty");
        }
        this.prefix = prefix + "/";
    }

    /** The prefix this view adds, without the trailing '/'. */
    public String prefix() {
        return prefix.substring(0, prefix.length() - 1);
    }

    public Store inner() {
        return inner;
    }

    private String full(String key) {
        return key == null ? null : prefix + key;
    }

    private List<String> full(List<String> keys) {
        if (keys == null) {
            return null;
        }
        List<String> result = new ArrayList<>(keys.size());
        for (String key : keys) {
            result.add(full(key));
        }
        return result;
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return inner.set(full(key), value);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return inner.get(full(key), timeout);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return inner.add(full(key), delta);
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return inner.await(full(keys), timeout);
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return inner.check(full(keys));
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return inner.delete(full(key));
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return inner.compareSet(full(key), expected, desired);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return inner.append(full(key), value);
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return inner.multiGet(full(keys), timeout);
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return inner.multiSet(full(keys), values);
    }

    @Override
    public Uni<Long> numKeys() {
        return inner.numKeys();
    }

    @Override
    public Uni<List<String>> listKeys() {
        return inner.listKeys().map(all -> {
            List<String> mine = new ArrayList<>();
            for (String key : all) {
                if (key.startsWith(prefix)) {
                    mine.add(key.substring(prefix.length()));
                }
            }
            return mine;
        });
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return inner.queuePush(full(key), value);
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return inner.queuePop(full(key), timeout);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return inner.queueLength(full(key));
    }

    @Override
    public Uni<Void> ping() {
        return inner.ping();
    }

    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public void close() {
        // The underlying store is not this view's to close.
    }
}
