package io.symmem;

import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;

/**
 * Closes the Vert.x instance a library world runs on, waiting a bounded time: Vert.x waits for every
 * deployment's stop without a limit of its own, and a world's close must end whatever a stop does.
 */
final class VertxShutdown {
    /** Far above a normal close (milliseconds), and still an end for a program that closes its world. */
    static final Duration LIMIT = Duration.ofSeconds(30);

    private static final Logger LOG = Logger.getLogger(VertxShutdown.class);

    private VertxShutdown() {}

    /**
     * Closes {@code vertx} and waits for it at most {@code limit}. Returns whether it closed in time; when it
     * did not, says so in a warning and leaves the rest of the close running in Vert.x's own threads.
     */
    static boolean close(Vertx vertx, Duration limit, int rank) {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(limit.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            LOG.warnf("rank %d: Vert.x did not close within %s (a deployment's stop never ended); the world is closed without it",
                    rank, limit);
            return false;
        } catch (ExecutionException e) {
            LOG.warnf("rank %d: Vert.x closed with an error: %s", rank, e.getCause());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
