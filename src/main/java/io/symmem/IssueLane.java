package io.symmem;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeStream;

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
 * <p>
 * A lane can be "in a graph" on one thread ({@link #inGraph}): while a CUDA graph of its calls is
 * captured (device backends) or a recorded graph is replayed (host backend). The lane is held for
 * the whole time, its own calls from that thread go straight through (recorded on the GPU, not
 * waited for), and any other lane's calls from that thread are refused: a graph records the calls of
 * one stream.
 */
final class IssueLane implements AutoCloseable {
    private final String what;
    private final boolean oneThread;
    private final NativeStream stream;
    private static final ThreadLocal<IssueLane> IN_GRAPH = new ThreadLocal<>();
    // The thread inside a call and its operation, set and read together under `gate`, so that a
    // refusal always names the operation running (a thread preempted between setting one and the
    // other made a refusal name "a collective" instead). Uncontended, the gate costs a lock and an
    // unlock per call and allocates nothing.
    private final Object gate = new Object();
    private Thread inside;
    private String insideOperation;
    private volatile Thread owner;
    private final java.util.concurrent.atomic.AtomicInteger liveGraphs = new java.util.concurrent.atomic.AtomicInteger();

    /** {@code what}: the buffer or pool, as messages name it. {@code oneThread}: the pool rule above. */
    IssueLane(String what, SymmetricMemory memory, boolean oneThread) {
        this.what = what;
        this.oneThread = oneThread;
        this.stream = memory.createStream();
    }

    /** A graph of this lane's calls was captured: its buffers may not be freed until it is closed. */
    void graphOpened() {
        liveGraphs.incrementAndGet();
    }

    void graphClosed() {
        liveGraphs.decrementAndGet();
    }

    /** Captured graphs of this lane still open. */
    int liveGraphs() {
        return liveGraphs.get();
    }

    /** The lane's stream (the host backend's stand-in is synchronous). */
    NativeStream stream() {
        return stream;
    }

    /** What messages call this lane's buffer or pool. */
    String what() {
        return what;
    }

    /** Runs {@code call} as {@code operation} on this lane, or refuses it at once (see the class comment). */
    void issue(String group, String operation, Runnable call) {
        IssueLane graph = IN_GRAPH.get();
        if (graph == this) {
            call.run();  // inside this lane's graph: inGraph holds the lane
            return;
        }
        if (graph != null) {
            throw new IllegalStateException(operation + " on group '" + group + "' inside a graph of " + graph.what
                    + ": a graph records the calls of one buffer (or of one pool's blocks), on its stream; capture this"
                    + " call in a graph of its own buffer");
        }
        enter(group, operation);
        try {
            call.run();
        } finally {
            leave();
        }
    }

    /**
     * Runs {@code body} with this lane in a graph on this thread (see the class comment), holding the lane
     * as one call named {@code operation}. Graphs do not nest.
     */
    void inGraph(String group, String operation, Runnable body) {
        IssueLane graph = IN_GRAPH.get();
        if (graph != null) {
            throw new IllegalStateException(operation + " on group '" + group + "' inside a graph of " + graph.what
                    + ": graphs do not nest; end that capture first");
        }
        enter(group, operation);
        IN_GRAPH.set(this);
        try {
            body.run();
        } finally {
            IN_GRAPH.remove();
            leave();
        }
    }

    /**
     * Refuses a group call that is not a collective on a buffer (allocation, a store barrier) while this
     * thread is inside a graph: it would run once at capture on the GPU, or at every replay on the host.
     */
    static void refuseInGraph(String group, String operation) {
        IssueLane graph = IN_GRAPH.get();
        if (graph != null) {
            throw new IllegalStateException(operation + " on group '" + group + "' inside a graph of " + graph.what
                    + ": only collectives on the graph's buffer are captured; call it before the capture or"
                    + " between replays");
        }
    }

    /** True while this thread captures (or, on the host, replays) a graph of this lane. */
    boolean inGraphOnThisThread() {
        return IN_GRAPH.get() == this;
    }

    /**
     * Waits until the lane's work so far has completed and reports device-side timeouts, except inside
     * this lane's graph, where the calls are recorded (GPU) or have run already (host).
     */
    void awaitResult(SymmetricMemory memory) {
        if (!inGraphOnThisThread()) {
            memory.synchronize(stream);
        }
    }

    private void enter(String group, String operation) {
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
        Thread other;
        String running;
        synchronized (gate) {
            other = inside;
            running = insideOperation;
            if (other == null) {
                inside = me;
                insideOperation = operation;
            }
        }
        if (other != null) {
            throw new IllegalStateException(operation + " on group '" + group + "' refused: " + running + " (thread '"
                    + other.getName() + "') is running on " + what + " right now; the collectives on one"
                    + " buffer are one sequence that every rank issues in the same order, so issue them from one thread"
                    + " at a time, or give each thread a buffer of its own");
        }
    }

    private void leave() {
        synchronized (gate) {
            inside = null;
            insideOperation = null;
        }
    }

    @Override
    public void close() {
        stream.close();
    }
}
