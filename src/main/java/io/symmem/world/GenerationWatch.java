package io.symmem.world;

import io.symmem.store.Store;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * Follows the store's generation counter while a member joins: when another rank gave the member's
 * generation up (its join failed there, or it came back to a world that had formed), the member hears
 * of it within one poll and can cut its join short, rather than wait out its rendezvous deadline.
 */
final class GenerationWatch implements AutoCloseable {
    /** How often a joining member reads the counter: one small request, a few times a second. */
    static final Duration POLL = Duration.ofMillis(200);

    private final Vertx vertx;
    private volatile long timer = -1;
    private volatile boolean over;

    /**
     * Starts polling {@code wholeRun}'s counter until {@code done} holds or {@link #close}; tells
     * {@code moved} (once) of a counter past {@code generation}.
     */
    GenerationWatch(Vertx vertx, Store wholeRun, long generation, BooleanSupplier done, LongConsumer moved) {
        this.vertx = vertx;
        timer = vertx.setPeriodic(POLL.toMillis(), id -> {
            if (over || done.getAsBoolean()) {
                close();
                return;
            }
            wholeRun.add(WorldGeneration.KEY, 0).subscribe().with(now -> {
                if (now > generation && !over && !done.getAsBoolean()) {
                    close();
                    moved.accept(now);
                }
            }, failure -> close());
        });
    }

    @Override
    public void close() {
        over = true;
        long id = timer;
        if (id >= 0) {
            vertx.cancelTimer(id);
        }
    }
}
