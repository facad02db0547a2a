package io.symmem.store.server;

import io.symmem.store.CounterValues;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.wire.Popped;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The data of the store and its pending waits. Not thread-safe by design: the server touches it
 * only from its own event-loop context, so every operation is atomic without locks. The two counts
 * that metrics read ({@link #keyCount()}, {@link #pendingWaitCount()}) are the exception: kept in
 * atomics beside the maps, written here on the loop and readable from any thread, so that a scrape
 * sees the figure of the moment without waiting for the loop.
 *
 * <p>Wait accounting follows TCPStore: a WAIT counts the keys absent when it arrives; every set/add
 * of one of those keys counts down once; at zero the waiter is woken. Deleting a key after it was
 * counted does not re-arm the wait (TCPStore behaves the same).
 *
 * <p>Queues live beside the values, as in TCPStore's libuv server: a key may name a value and a queue
 * at once; a non-empty queue counts as present for CHECK and WAIT (that is how a blocking pop waits),
 * but queues are not counted by {@link #size()} nor listed by {@link #keys()}.
 */
final class StoreState {

    /** One pending WAIT. {@code owner} identifies the connection, so CANCEL_WAIT and disconnects can drop it. */
    private static final class Waiter {
        final Object owner;
        final List<String> awaitedKeys;
        final Runnable onReady;
        int remaining;

        Waiter(Object owner, List<String> awaitedKeys, Runnable onReady) {
            this.owner = owner;
            this.awaitedKeys = awaitedKeys;
            this.onReady = onReady;
            this.remaining = awaitedKeys.size();
        }
    }

    private final Map<String, byte[]> values = new HashMap<>();
    private final Map<String, List<Waiter>> waitersByKey = new HashMap<>();
    private final Map<Object, List<Waiter>> waitersByOwner = new IdentityHashMap<>();
    private final Map<String, ArrayDeque<byte[]>> queues = new HashMap<>();
    /** values.size() and the number of registered waiters, mirrored for readers on other threads. */
    private final AtomicInteger keyCount = new AtomicInteger();
    private final AtomicInteger waiterCount = new AtomicInteger();

    void set(String key, byte[] value) {
        put(key, value);
        wakeWaitersOn(key);
    }

    /** The value, or an empty array when absent (what TCPStore's libuv server answers). */
    byte[] get(String key) {
        byte[] value = values.get(key);
        return value == null ? new byte[0] : value;
    }

    /**
     * Adds {@code delta} to the decimal integer stored under {@code key} (0 when absent) and stores the
     * result as decimal ASCII, as TCPStore does.
     *
     * @throws StoreProtocolException if the present value is not a decimal integer
     */
    long add(String key, long delta) {
        byte[] current = values.get(key);
        long base = 0;
        if (current != null) {
            base = CounterValues.parse(current).orElseThrow(() ->
                    new StoreProtocolException("ADD on key '" + key + "' whose value is not a decimal integer"));
        }
        // Wraps around past the int64 range, as TCPStore's C++ addition does (the HTTP face refuses it).
        long result = base + delta;
        put(key, CounterValues.of(result));
        wakeWaitersOn(key);
        return result;
    }

    /**
     * c10d compare_set: a missing key holds "empty". If the current value equals {@code expected},
     * {@code desired} is stored. Returns the value afterwards, except that for a missing key and a
     * non-empty {@code expected} nothing is stored and {@code expected} is returned (TCPStore's answer).
     */
    byte[] compareSet(String key, byte[] expected, byte[] desired) {
        byte[] current = values.get(key);
        if (current == null) {
            if (expected.length != 0) {
                return expected;
            }
            set(key, desired);
            return desired;
        }
        if (Arrays.equals(current, expected)) {
            set(key, desired);
            return desired;
        }
        return current;
    }

    /** Appends to the value (creating it) and wakes waiters, as a set would. */
    void append(String key, byte[] suffix) {
        byte[] current = values.get(key);
        if (current == null) {
            set(key, suffix);
            return;
        }
        byte[] joined = Arrays.copyOf(current, current.length + suffix.length);
        System.arraycopy(suffix, 0, joined, current.length, suffix.length);
        set(key, joined);
    }

    /** Values in key order, empty for absent keys (as GET). */
    List<byte[]> getAll(List<String> keys) {
        List<byte[]> result = new ArrayList<>(keys.size());
        for (String key : keys) {
            result.add(get(key));
        }
        return result;
    }

    /** Sets every pair; nothing else runs in between, so other requests see all or none of them. */
    void setAll(List<String> keys, List<byte[]> newValues) {
        for (int i = 0; i < keys.size(); i++) {
            set(keys.get(i), newValues.get(i));
        }
    }

    /** The wire keys of values (not queues), in no particular order. */
    List<String> keys() {
        return new ArrayList<>(values.keySet());
    }

    /** Appends to queue {@code key} and wakes at most one waiter: one value can satisfy one pop. */
    void queuePush(String key, byte[] value) {
        queues.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(value);
        wakeOneWaiterOn(key);
    }

    Popped queuePop(String key) {
        ArrayDeque<byte[]> queue = queues.get(key);
        if (queue == null || queue.isEmpty()) {
            return new Popped(0, null);
        }
        long length = queue.size();
        byte[] value = queue.pollFirst();
        if (queue.isEmpty()) {
            queues.remove(key);
        }
        return new Popped(length, value);
    }

    long queueLength(String key) {
        ArrayDeque<byte[]> queue = queues.get(key);
        return queue == null ? 0 : queue.size();
    }

    int queueCount() {
        return queues.size();
    }

    boolean containsAll(List<String> keys) {
        for (String key : keys) {
            if (!isPresent(key)) {
                return false;
            }
        }
        return true;
    }

    /** A value exists, or a queue holds something (TCPStore's rule, so a blocking pop can WAIT). */
    boolean isPresent(String key) {
        if (values.containsKey(key)) {
            return true;
        }
        ArrayDeque<byte[]> queue = queues.get(key);
        return queue != null && !queue.isEmpty();
    }

    boolean delete(String key) {
        if (values.remove(key) == null) {
            return false;
        }
        keyCount.decrementAndGet();
        return true;
    }

    /** Every write of a value goes through here, so that the key count follows the map. */
    private void put(String key, byte[] value) {
        if (values.put(key, value) == null) {
            keyCount.incrementAndGet();
        }
    }

    int size() {
        return values.size();
    }

    /** Keys holding a value, as {@link #size()}, but readable from any thread. */
    int keyCount() {
        return keyCount.get();
    }

    /**
     * Registers a wait for {@code keys}. Returns true if they are all present already (nothing is
     * registered and {@code onReady} is not called); otherwise {@code onReady} runs once they are.
     */
    boolean awaitKeys(Object owner, List<String> keys, Runnable onReady) {
        if (containsAll(keys)) {
            return true;
        }
        List<String> missing = new ArrayList<>();
        for (String key : keys) {
            if (!isPresent(key)) {
                missing.add(key);
            }
        }
        Waiter waiter = new Waiter(owner, missing, onReady);
        for (String key : missing) {
            waitersByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(waiter);
        }
        waitersByOwner.computeIfAbsent(owner, o -> new ArrayList<>()).add(waiter);
        waiterCount.incrementAndGet();
        return false;
    }

    /** Drops every pending wait of {@code owner} (CANCEL_WAIT or disconnect). */
    void cancelWaits(Object owner) {
        List<Waiter> owned = waitersByOwner.remove(owner);
        if (owned == null) {
            return;
        }
        waiterCount.addAndGet(-owned.size());
        for (Waiter waiter : owned) {
            for (String key : waiter.awaitedKeys) {
                List<Waiter> onKey = waitersByKey.get(key);
                if (onKey != null) {
                    onKey.removeIf(w -> w == waiter);
                    if (onKey.isEmpty()) {
                        waitersByKey.remove(key);
                    }
                }
            }
        }
    }

    int pendingWaits() {
        return waitersByOwner.values().stream().mapToInt(List::size).sum();
    }

    /** Waits registered and not yet released or cancelled, as {@link #pendingWaits()}, readable from any thread. */
    int pendingWaitCount() {
        return waiterCount.get();
    }

    /** Counts down waiters on {@code key} in arrival order until one is complete, and wakes that one. */
    private void wakeOneWaiterOn(String key) {
        List<Waiter> onKey = waitersByKey.get(key);
        if (onKey == null) {
            return;
        }
        while (!onKey.isEmpty()) {
            Waiter waiter = onKey.remove(0);
            waiter.remaining--;
            if (waiter.remaining == 0) {
                release(waiter);
                break;
            }
        }
        if (onKey.isEmpty()) {
            waitersByKey.remove(key);
        }
    }

    private void release(Waiter waiter) {
        List<Waiter> owned = waitersByOwner.get(waiter.owner);
        if (owned != null && owned.remove(waiter)) {
            waiterCount.decrementAndGet();
            if (owned.isEmpty()) {
                waitersByOwner.remove(waiter.owner);
            }
        }
        waiter.onReady.run();
    }

    private void wakeWaitersOn(String key) {
        if (waitersByKey.isEmpty()) {
            // The common case, and cheaper than a lookup per key: a MULTI_SET of 65,536 keys is one
            // atomic step that holds the event loop (8-11 ms instead of 14-18 ms on the 2-core machine).
            return;
        }
        List<Waiter> onKey = waitersByKey.remove(key);
        if (onKey == null) {
            return;
        }
        for (Waiter waiter : onKey) {
            waiter.remaining--;
            if (waiter.remaining == 0) {
                release(waiter);
            }
        }
    }
}
