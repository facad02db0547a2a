package io.symmem.store;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The data of the store and its pending waits. Not thread-safe by design: the server touches it
 * only from its own event-loop context, so every operation is atomic without locks.
 *
 * <p>Wait accounting follows TCPStore: a WAIT counts the keys absent when it arrives; every set/add
 * of one of those keys counts down once; at zero the waiter is woken. Deleting a key after it was
 * counted does not re-arm the wait (TCPStore behaves the same).
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

    void set(String key, byte[] value) {
        values.put(key, value);
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
            String text = new String(current, StandardCharsets.US_ASCII).trim();
            try {
                base = Long.parseLong(text);
            } catch (NumberFormatException e) {
                throw new StoreProtocolException("ADD on key '" + key + "' whose value is not a decimal integer");
            }
        }
        long result = base + delta;
        values.put(key, Long.toString(result).getBytes(StandardCharsets.US_ASCII));
        wakeWaitersOn(key);
        return result;
    }

    boolean containsAll(List<String> keys) {
        for (String key : keys) {
            if (!values.containsKey(key)) {
                return false;
            }
        }
        return true;
    }

    boolean delete(String key) {
        return values.remove(key) != null;
    }

    int size() {
        return values.size();
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
            if (!values.containsKey(key)) {
                missing.add(key);
            }
        }
        Waiter waiter = new Waiter(owner, missing, onReady);
        for (String key : missing) {
            waitersByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(waiter);
        }
        waitersByOwner.computeIfAbsent(owner, o -> new ArrayList<>()).add(waiter);
        return false;
    }

    /** Drops every pending wait of {@code owner} (CANCEL_WAIT or disconnect). */
    void cancelWaits(Object owner) {
        List<Waiter> owned = waitersByOwner.remove(owner);
        if (owned == null) {
            return;
        }
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

    private void wakeWaitersOn(String key) {
        List<Waiter> onKey = waitersByKey.remove(key);
        if (onKey == null) {
            return;
        }
        for (Waiter waiter : onKey) {
            waiter.remaining--;
            if (waiter.remaining == 0) {
                List<Waiter> owned = waitersByOwner.get(waiter.owner);
                if (owned != null) {
                    owned.remove(waiter);
                    if (owned.isEmpty()) {
                        waitersByOwner.remove(waiter.owner);
                    }
                }
                waiter.onReady.run();
            }
        }
    }
}
