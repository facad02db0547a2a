package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The keys a process wrote on one connection with a request that has no answer (SET, APPEND,
 * MULTI_SET, QUEUE_PUSH), for which no answer on that connection has yet proved that the server read
 * them.
 *
 * <p>Why it matters: the server applies what it has read in order, whatever the socket, but the
 * kernel does not promise to deliver two sockets' data in the order it was sent. On loopback a
 * segment can wait in one CPU's backlog while a later one, sent from another CPU, is delivered at
 * once; under load this happens. So a read on a second connection of a key just set on the first
 * can overtake the set and see the old value. {@link #confirm} closes that gap: when the keys about
 * to be read have writes outstanding, it sends a round trip (PING) on the writing connection first,
 * and its answer proves every earlier frame of that connection was read and applied. Reads of keys
 * this process did not write pay nothing.
 *
 * <p>A process that writes many keys and reads none of them back does not keep them all: past
 * {@link #TRIM_AT} keys outstanding, one round trip goes out on its own and its answer confirms them.
 *
 * <p>Thread-safe. Ordering holds for what one thread does (write, then read); two threads that do
 * not synchronise with each other have no order to keep.
 */
final class UnconfirmedWrites {

    /** Keys outstanding past which a round trip is sent to confirm them, with no read waiting for it. */
    static final int TRIM_AT = 1024;

    private final Supplier<Uni<Void>> roundTrip;
    private final AtomicLong written = new AtomicLong();
    /** Key to the sequence number of its latest write not yet confirmed. */
    private final Map<String, Long> pending = new ConcurrentHashMap<>();
    private final AtomicBoolean trimming = new AtomicBoolean();

    /** @param roundTrip a request with an answer (PING) on the connection that carries the writes */
    UnconfirmedWrites(Supplier<Uni<Void>> roundTrip) {
        this.roundTrip = roundTrip;
    }

    /**
     * Records writes to {@code keys}. Call it after the write was handed to the connection, so a
     * round trip sent for it later is queued behind the write.
     */
    void wrote(Collection<String> keys) {
        if (keys == null) {
            return; // refused by the connection already, with its own error
        }
        long sequence = written.incrementAndGet();
        for (String key : keys) {
            if (key != null) {
                pending.put(key, sequence);
            }
        }
        trimIfLarge();
    }

    void wrote(String key) {
        if (key != null) {
            pending.put(key, written.incrementAndGet());
            trimIfLarge();
        }
    }

    private void trimIfLarge() {
        if (pending.size() > TRIM_AT && trimming.compareAndSet(false, true)) {
            long upTo = written.get();
            // A failed round trip confirms nothing: the keys stay, and the next write tries again.
            roundTrip.get().subscribe().with(confirmed -> {
                forgetUpTo(upTo);
                trimming.set(false);
            }, lost -> trimming.set(false));
        }
    }

    /** Whether any of {@code keys} has a write not yet confirmed. */
    boolean outstanding(Collection<String> keys) {
        if (keys == null || pending.isEmpty()) {
            return false;
        }
        for (String key : keys) {
            if (key != null && pending.containsKey(key)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs {@code read} once every write to {@code keys} recorded so far has been confirmed by a round
     * trip on the writing connection; at once when none is outstanding. A failed round trip fails the
     * read: the connection that carried the writes was lost, and whether the server applied them is
     * unknown.
     */
    <T> Uni<T> confirm(Collection<String> keys, Supplier<Uni<T>> read) {
        if (!outstanding(keys)) {
            return read.get();
        }
        long upTo = written.get();
        // Started now, as every store operation is when called; a cancelled result cancels the read.
        CompletableFuture<T> result = new CompletableFuture<>();
        AtomicReference<Cancellable> reading = new AtomicReference<>();
        roundTrip.get().subscribe().with(confirmed -> {
            forgetUpTo(upTo);
            if (!result.isDone()) {
                Cancellable running = read.get().subscribe().with(result::complete, result::completeExceptionally);
                reading.set(running);
                if (result.isCancelled()) {
                    running.cancel();
                }
            }
        }, result::completeExceptionally);
        result.whenComplete((ignored, error) -> {
            Cancellable running = reading.get();
            if (result.isCancelled() && running != null) {
                running.cancel();
            }
        });
        return Uni.createFrom().completionStage(result);
    }

    /** Drops every write numbered {@code upTo} or lower; a later write to the same key stays. */
    private void forgetUpTo(long upTo) {
        for (Map.Entry<String, Long> entry : pending.entrySet()) {
            long sequence = entry.getValue();
            if (sequence <= upTo) {
                pending.remove(entry.getKey(), sequence);
            }
        }
    }
}
