package io.symmem.store.server;

import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.symmem.store.ContextTasks;
import io.vertx.core.Context;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs a task on the store's context after its event loop has looked at the sockets again. This is
 * how long work is cut into slices without holding up other connections: a task queued with
 * runOnContext from a task runs in the same batch of tasks, before any socket is read (Netty checks
 * the time only every 64 tasks), so a slice that queues the next one that way never lets the loop
 * read. Netty's "after this loop iteration" queue runs once the current batch of tasks is done; the
 * task queued from there runs in the next iteration, after the sockets were read.
 *
 * <p>It also numbers the turns, for budgets per turn ({@link #turn()}): one task per turn, and only in
 * turns where something asked for the number. Confined to the context's thread (apart from {@link #run}).
 */
final class NextTurn {

    private final Context context;
    /** Null when the loop is not one of Netty's single-threaded loops: then plain runOnContext. */
    private final SingleThreadEventLoop loop;
    private long turn;
    private boolean tickQueued;
    private List<Runnable> atNextTurn = new ArrayList<>();

    NextTurn(Context context) {
        this.context = context;
        EventLoop eventLoop = VertxInternals.eventLoopOf(context);
        this.loop = eventLoop instanceof SingleThreadEventLoop single ? single : null;
    }

    /** Queues {@code task}; false if the loop has ended (the server stopped) and will run nothing. */
    boolean run(Runnable task) {
        if (loop == null) {
            return ContextTasks.tryRun(context, task);
        }
        try {
            loop.executeAfterEventLoopIteration(() -> ContextTasks.tryRun(context, task));
            return true;
        } catch (RejectedExecutionException stopped) {
            return false;
        }
    }

    /** The number of the current turn; it changes once the loop has looked at the sockets again. */
    long turn() {
        tickLater();
        return turn;
    }

    /** Runs {@code task} when the turn number changes (after the loop has looked at the sockets again). */
    void atNextTurn(Runnable task) {
        atNextTurn.add(task);
        tickLater();
    }

    private void tickLater() {
        if (!tickQueued) {
            tickQueued = run(this::tick);
        }
    }

    private void tick() {
        tickQueued = false;
        turn++;
        List<Runnable> due = atNextTurn;
        atNextTurn = new ArrayList<>();
        due.forEach(Runnable::run);
    }
}
