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

    /**
     * c10d compare_set: if {@code key} holds {@code expected}, store {@code desired}. A missing key
     * counts as holding the empty value. Returns the value the key holds afterwards (for a missing
     * key and a non-empty {@code expected}, returns {@code expected} and stores nothing, as TCPStore).
     */
    Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired);

    /** Appends {@code value} to the bytes of {@code key} (creating it), and wakes waiters on it. */
    Uni<Void> append(String key, byte[] value);

    /** Values of all {@code keys}, in order, waiting up to {@code timeout} for every one to exist. */
    Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout);

    /** Sets every key to the value at the same index, atomically with respect to other requests. */
    Uni<Void> multiSet(List<String> keys, List<byte[]> values);

    /** Number of keys holding a value, in the whole store; queues are not counted (as TCPStore's GETNUMKEYS). */
    Uni<Long> numKeys();

    /** Every key holding a value (not queues), in no particular order. */
    Uni<List<String>> listKeys();

    /** Pushes {@code value} onto the FIFO queue {@code key}, waking one blocked pop. */
    Uni<Void> queuePush(String key, byte[] value);

    /** Pops the oldest value of queue {@code key}, waiting up to {@code timeout} for one. */
    Uni<byte[]> queuePop(String key, Duration timeout);

    /** Number of values in queue {@code key} (0 if absent). */
    Uni<Long> queueLength(String key);

    /** Round trip to the store: proves it is reachable and answering. */
    Uni<Void> ping();

    /** Where this store is reached, for error messages (e.g. "127.0.0.1:29500"). */
    String describe();

    @Override
    void close();
}
