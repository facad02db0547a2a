package io.symmem.store.server;

import io.symmem.store.DurationText;
import io.symmem.store.StoreLimits;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.util.ArrayDeque;
import java.util.List;

/**
 * The answers of one connection that its socket has not taken yet, and the backpressure that keeps
 * them bounded whatever the client does. Confined to the server's context.
 *
 * <p>Two figures: <i>queued</i> bytes are encoded and handed to the socket but not yet taken by the
 * kernel (memory the server holds for this client: Netty copies them to direct memory); <i>unsent</i>
 * bytes are those plus the answers not encoded yet (which reference the store's values). The
 * connection applies a request that has an answer only while unsent bytes are under the soft bound
 * ({@link StoreLimits#answerQueueBytes()}), and encoding stops while queued bytes are at it, so:
 *
 * <ul>
 *   <li>at most one answer is ever taken on beyond the soft bound, and it is not copied up front;</li>
 *   <li>queued bytes stay under the soft bound plus one slice ({@link #SLICE_BYTES}), whatever the
 *       size of the answers (a 64 MiB value is copied out 64 KiB at a time as the socket drains).</li>
 * </ul>
 *
 * <p>At the soft bound the connection is <i>backed up</i>: it is no longer read from and its requests
 * are no longer applied (see {@link StoreServerConnection}) until unsent bytes fall to half the bound.
 * Queued bytes past the hard bound ({@link StoreLimits#answerQueueCloseBytes()}), or a backed-up
 * connection whose socket takes nothing for {@link StoreLimits#answerDrainTimeout()}, close the
 * connection: its client is gone or stuck, and what it holds is released.
 *
 * <p>Why our own count rather than Netty's writability: it is exact per connection (what the metric
 * reports), it covers answers not yet encoded, and a write's completion is exactly "the kernel took
 * these bytes", which also tells whether a backed-up client is still reading at all.
 */
final class AnswerQueue {

    /** Most bytes of one write: also the most the queue can pass the soft bound by. */
    static final int SLICE_BYTES = 64 * 1024;
    /** Most bytes encoded for one connection per loop turn, so that copying a big answer never holds the loop long. */
    static final int TURN_BYTES = 1024 * 1024;

    /** The connection this queue belongs to. */
    interface Owner {
        /** No longer backed up: read from the client and apply its requests again. */
        void drained();

        /** Over the hard bound or the drain time limit: the connection must be closed now, unsent answers dropped. */
        void stuck(String why);
    }

    private final NetSocket socket;
    private final Context context;
    private final NextTurn nextTurn;
    private final StoreLimits limits;
    private final Owner owner;
    private final ArrayDeque<AnswerPart> parts = new ArrayDeque<>();
    private long queued;
    private long notEncoded;
    private boolean backedUp;
    private boolean pumpQueued;
    private boolean released;
    /** When the socket last took bytes, or when the connection became backed up (System.nanoTime()). */
    private long lastProgress;
    private long drainTimer = -1;

    AnswerQueue(NetSocket socket, Context context, NextTurn nextTurn, StoreLimits limits, Owner owner) {
        this.socket = socket;
        this.context = context;
        this.nextTurn = nextTurn;
        this.limits = limits;
        this.owner = owner;
    }

    // ---- answers, in order ----

    /** A small answer frame (copied in whole). */
    void add(Buffer frame) {
        AnswerPart tail = parts.peekLast();
        if (!(tail instanceof AnswerPart.Bytes bytes && bytes.tryAppend(frame))) {
            parts.addLast(new AnswerPart.Bytes(frame)); // the encoder's own buffer: later frames are appended to it
        }
        notEncoded += frame.length();
    }

    /** A length-prefixed value (GET, COMPARE_SET, QUEUE_POP), referenced until it is encoded. */
    void addValue(byte[] value) {
        add(new AnswerPart.Vector(value));
    }

    /** MULTI_GET's values, referenced until they are encoded. */
    void addValues(List<byte[]> values) {
        add(new AnswerPart.Vectors(values));
    }

    /** LIST_KEYS's answer: the count and the keys. */
    void addKeys(List<String> keys) {
        add(new AnswerPart.Keys(keys));
    }

    private void add(AnswerPart part) {
        parts.addLast(part);
        notEncoded += part.remaining();
    }

    // ---- the bounds ----

    /** Whether the connection may take on another answer now. */
    boolean accepting() {
        return !backedUp && unsent() < limits.answerQueueBytes();
    }

    boolean backedUp() {
        return backedUp;
    }

    /** Encoded bytes the socket has not taken yet. */
    long queued() {
        return queued;
    }

    /** Answer bytes not sent yet: queued plus not yet encoded. */
    long unsent() {
        return queued + notEncoded;
    }

    // ---- writing ----

    /** Encodes and writes what the socket can take now; called after every scheduler pass that touched the connection. */
    void flush() {
        pump();
    }

    private void pump() {
        if (released) {
            return;
        }
        long encodedThisTurn = 0;
        while (notEncoded > 0 && queued < limits.answerQueueBytes() && encodedThisTurn < TURN_BYTES) {
            Buffer slice = encodeSlice();
            encodedThisTurn += slice.length();
            write(slice);
            if (released) {
                return; // the write failed at once and the connection was closed
            }
        }
        if (queued > limits.answerQueueCloseBytes()) {
            owner.stuck(queued + " answer bytes queued, over the hard bound of " + limits.answerQueueCloseBytes());
            return;
        }
        if (notEncoded > 0 && queued < limits.answerQueueBytes()) {
            queuePump(); // this turn's share is copied: the rest after the loop has served others
        }
        if (!backedUp && unsent() >= limits.answerQueueBytes()) {
            backedUp = true;
            lastProgress = System.nanoTime();
            armDrainTimer(limits.answerDrainTimeout().toMillis());
        }
    }

    private Buffer encodeSlice() {
        Buffer slice = Buffer.buffer((int) Math.min(SLICE_BYTES, notEncoded));
        while (slice.length() < SLICE_BYTES && !parts.isEmpty()) {
            AnswerPart head = parts.peekFirst();
            head.encodeInto(slice, SLICE_BYTES - slice.length());
            if (head.remaining() == 0) {
                parts.pollFirst();
            }
        }
        notEncoded -= slice.length();
        return slice;
    }

    private void write(Buffer slice) {
        int bytes = slice.length();
        queued += bytes;
        // Completes when the kernel has taken the bytes (or the connection failed): on this context.
        socket.write(slice).onComplete(done -> taken(bytes));
    }

    private void taken(int bytes) {
        queued -= bytes;
        lastProgress = System.nanoTime();
        if (released) {
            return;
        }
        if (notEncoded > 0 && queued < limits.answerQueueBytes()) {
            queuePump();
        }
        if (backedUp && unsent() <= limits.answerQueueBytes() / 2) {
            backedUp = false;
            cancelDrainTimer();
            owner.drained();
        }
    }

    private void queuePump() {
        if (!pumpQueued) {
            pumpQueued = true;
            nextTurn.run(() -> {
                pumpQueued = false;
                pump();
            });
        }
    }

    // ---- the drain time limit ----

    private void armDrainTimer(long delayMillis) {
        // On the context: Vert.x sets the timer on the current context, so it fires here.
        drainTimer = context.owner().setTimer(Math.max(1, delayMillis), id -> checkDrain());
    }

    private void checkDrain() {
        drainTimer = -1;
        if (released || !backedUp) {
            return;
        }
        long idleMillis = (System.nanoTime() - lastProgress) / 1_000_000;
        long limit = limits.answerDrainTimeout().toMillis();
        if (idleMillis >= limit) {
            owner.stuck("its socket took no answer byte for " + DurationText.of(limits.answerDrainTimeout()) + " while "
                    + unsent() + " answer bytes waited (" + queued + " queued)");
        } else {
            armDrainTimer(limit - idleMillis);
        }
    }

    private void cancelDrainTimer() {
        if (drainTimer >= 0) {
            context.owner().cancelTimer(drainTimer);
            drainTimer = -1;
        }
    }

    /** The connection closed: answers not encoded yet are dropped; queued ones are Netty's to fail. */
    void release() {
        released = true;
        parts.clear();
        notEncoded = 0;
        backedUp = false;
        cancelDrainTimer();
    }
}
