package io.symmem.store;

import io.vertx.core.Context;
import java.util.concurrent.RejectedExecutionException;

/** Running work on an event-loop context whose loop may already have ended. */
public final class ContextTasks {

    private ContextTasks() {
    }

    /**
     * Queues {@code action} on {@code context}; false when its loop has shut down (the store server
     * stopped, or the client's Vert.x closed) and will run nothing any more, so the caller answers
     * for it.
     */
    public static boolean tryRun(Context context, Runnable action) {
        try {
            context.runOnContext(ignored -> action.run());
            return true;
        } catch (RejectedExecutionException stopped) {
            return false;
        }
    }
}
