package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;

/**
 * The rendezvous key/value store with c10d Store semantics. Every operation is asynchronous; every
 * operation that waits takes a deadline and fails with {@link StoreTimeoutException} naming the keys
 * it waited for. Values are opaque bytes.
 */
public interface Store extends AutoCloseable {

    /** Stores {@code value} under {@code key}, replacing any value, and wakes waiters on the key. */
    Uni<Void> set(String key, byte[] value);

    /** Returns the value of {@code key}, waiting up to {@code timeout} for it to be set. */
    Uni<byte[]> get(String key, Duration timeout);

    /** Adds {@code delta} to the integer stored as decimal text under {@code key} (0 if absent); returns the new value. */
    Uni<Long> add(String key, long delta);

    /** Completes once every key exists; fails after {@code timeout} naming the keys still missing. */
    Uni<Void> await(List<String> keys, Duration timeout);

    /** True if every key exists right now. */
    Uni<Boolean> check(List<String> keys);

    /** Deletes {@code key}; true if it existed. */
    Uni<Boolean> delete(String key);

    /** Where this store is reached, for error messages (e.g. "127.0.0.1:29500"). */
    String describe();

    @Override
    void close();
}
