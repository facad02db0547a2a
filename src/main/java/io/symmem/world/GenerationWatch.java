package io.symmem.world;

import io.symmem.store.Store;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

/**
 * Follows the store's generation counter while a member joins and while it is in its world: when
 * another rank gave the member's generation up (survivors that lost a rank, or a rank that came back
 * to a world that had formed), the member hears of it within one poll: a join is cut short rather than
 * waiting out its rendezvous deadline, and a formed world fails at once (so a rank that left in order
 * and came back is met by a world that forms again, not by ranks still in the old generation).
 */
final class GenerationWatch implements AutoCloseable {
    /** How often a member reads the counter: one small request, four times a second per rank. */
    static final Duration POLL = Duration.ofMillis(250);

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
