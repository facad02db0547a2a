package io.symmem;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeGraph;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Collectives of one buffer (or pool) captured once and replayed many times: made by
 * {@link SymmemGroup#capture}. On the device backends it is a CUDA graph, replayed on the buffer's
 * stream; on the host backend, whose calls run synchronously on the CPU, it is the captured code
 * itself, run again at each replay (the same results, without the GPU's launch savings).
 * Close it before its buffer: a live graph keeps the buffer's memory from being freed.
 */
public final class CapturedGraph implements AutoCloseable {
    private final String group;
    private final IssueLane lane;
    private final NativeGraph graph;    // device backends
    private final Runnable recorded;    // host backend
    private Consumer<CapturedGraph> onClose = g -> { };
    private boolean closed;
    private final BufferUse use;
    private Duration closePatience = Duration.ofSeconds(35);

    private CapturedGraph(String group, IssueLane lane, NativeGraph graph, Runnable recorded) {
        this.use = new BufferUse(group, "the captured graph of " + lane.what());
        this.group = group;
        this.lane = lane;
        this.graph = graph;
        this.recorded = recorded;
        lane.graphOpened();
    }

    /** A CUDA graph of what {@code body} issues on the lane's stream. */
    static CapturedGraph captured(String group, IssueLane lane, SymmetricMemory memory, Runnable body) {
        NativeGraph[] made = new NativeGraph[1];
        lane.inGraph(group, "capture", () -> made[0] = memory.captureGraph(lane.stream(), body));
        return new CapturedGraph(group, lane, made[0], null);
    }

    /** The host backend's graph: {@code body}, run at each replay. */
    static CapturedGraph recorded(String group, IssueLane lane, Runnable body) {
        lane.inGraph(group, "capture", () -> { });  // the refusals a device capture gives (nesting, a busy lane)
        return new CapturedGraph(group, lane, null, Objects.requireNonNull(body));
    }

    CapturedGraph onClose(Consumer<CapturedGraph> action) {
        this.onClose = action;
        return this;
    }

    /** True for a CUDA graph (device backends); false for the host backend's recorded code. */
    public boolean isDevice() {
        return graph != null;
    }

    /** Runs the captured collectives once, on what the buffers hold now; returns when the results are in place. */
    public void replay() {
        replay(1);
    }

    /**
     * Runs the captured collectives {@code times} times back to back (on the GPU: enqueued together, then
     * one wait); returns when the last results are in place. A device-side deadline that passed (a rank
     * that did not replay) fails with its error naming the rank.
     */
    public void replay(int times) {
        if (times < 1) {
            throw new IllegalArgumentException("replay(" + times + ") on group '" + group + "': times must be at least 1");
        }
        // Inside the graph's use: a close from another thread waits for this replay instead of freeing the
        // graph under it.
        use.run("replay", () -> replayOpen(times));
    }

    private void replayOpen(int times) {
        NativeGraph g = open();
        if (g == null) {
            for (int i = 0; i < times; i++) {
                lane.inGraph(group, "replay", recorded);
            }
            return;
        }
        lane.issue(group, "replay", () -> {
            for (int i = 0; i < times; i++) {
                g.replay(lane.stream());
            }
            g.synchronize(lane.stream());
        });
    }

    private synchronized NativeGraph open() {
        if (closed) {
            throw new IllegalStateException("the captured graph of " + lane.what() + " in group '" + group + "' is closed");
        }
        return graph;
    }

    /** How long a close waits for a replay running on another thread (the group's collective deadline and 5 s). */
    CapturedGraph closingWithin(Duration patience) {
        this.closePatience = patience;
        return this;
    }

    /**
     * Frees the graph. A replay running on another thread is waited for (up to the collective deadline
     * and 5 s more); one still running then refuses the close ({@link CloseRefusedException}), and
     * closing again later frees it.
     */
    @Override
    public void close() {
        if (!use.beginClose(closePatience)) {
            return;
        }
        synchronized (this) {
            closed = true;
        }
        use.endClose(true);
        try {
            if (graph != null) {
                graph.close();
            }
        } finally {
            lane.graphClosed();
            onClose.accept(this);
        }
    }
}
