package io.symmem;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeStream;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Where a buffer's collectives are issued: a stream of its own (made once, with the buffer, so that
 * buffers and groups never queue behind each other on one stream and no call pays for a stream),
 * and one caller at a time. The collectives of one buffer are one sequence that every rank issues in
 * the same order; a second thread that calls while another is inside a call on the same buffer is
 * refused at once, naming both operations, instead of interleaving with it.
 * <p>
 * The blocks of one {@link BufferPool} share one lane: they share their segment's signal pad, so
 * their collectives are one sequence too. Two threads could issue them in a different order on each
 * rank without ever overlapping in time, which would pair one block's barrier with another's; so a
 * pool's collectives belong to the first thread that issues one, and any other thread is refused.
 */
final class IssueLane implements AutoCloseable {
    private final String what;
    private final boolean oneThread;
    private final NativeStream stream;
    private final AtomicReference<Thread> inside = new AtomicReference<>();
    private volatile String insideOperation;
    private volatile Thread owner;

    /** {@code what}: the buffer or pool, as messages name it. {@code oneThread}: the pool rule above. */
    IssueLane(String what, SymmetricMemory memory, boolean oneThread) {
        this.what = what;
        this.oneThread = oneThread;
        this.stream = memory.createStream();
    }

    /** The lane's stream (the host backend's stand-in is synchronous). */
    NativeStream stream() {
        return stream;
    }

    /** Runs {@code call} as {@code operation} on this lane, or refuses it at once (see the class comment). */
    void issue(String group, String operation, Runnable call) {
        Thread me = Thread.currentThread();
        if (oneThread) {
            Thread first = owner;
            if (first == null) {
                synchronized (this) {
                    if (owner == null) {
                        owner = me;
                    }
                    first = owner;
                }
            }
            if (first != me) {
                throw new IllegalStateException(operation + " on group '" + group + "' from thread '" + me.getName()
                        + "': the collectives on " + what + " belong to thread '" + first.getName()
                        + "' (blocks of one pool share a signal pad, so their collectives must come from one thread"
                        + " to be in the same order on every rank); give this thread a pool or buffer of its own");
            }
        }
        // Nothing is allocated on the way in: the message is built only for a refusal.
        Thread other = inside.compareAndExchange(null, me);
        if (other != null) {
            String running = insideOperation;  // null for an instant after the other thread got in
            throw new IllegalStateException(operation + " on group '" + group + "' refused: "
                    + (running == null ? "a collective" : running) + " (thread '" + other.getName() + "') is running on " + what + " right now; the collectives on one"
                    + " buffer are one sequence that every rank issues in the same order, so issue them from one thread"
                    + " at a time, or give each thread a buffer of its own");
        }
        insideOperation = operation;
        try {
            call.run();
        } finally {
            insideOperation = null;
            inside.set(null);
        }
    }

    @Override
    public void close() {
        stream.close();
    }
}
