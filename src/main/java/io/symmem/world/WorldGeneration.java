package io.symmem.world;

import io.symmem.store.PrefixStore;
import io.symmem.store.Store;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The generations of one world in its store. A world that lost a rank cannot go on (its rounds and
 * signal state are out of step), but its ranks can form it again: the survivors and the restarted rank
 * join the next generation, whose keys (rendezvous, liveness, groups) live under a prefix of their own,
 * so no key of the lost generation is ever read in the new one.
 *
 * <p>The store holds one counter, {@value #KEY} (absent means 0): the generation that ranks join now.
 * A rank reads it and counts itself into that generation's joins. A count above the world size means
 * the generation was formed before (a restarted rank arrives, or a run that did not end in order left
 * its keys): the rank moves the counter one up, by compare-and-set so that many ranks doing it at once
 * move it once, and tries there. The survivors of a generation whose world failed give it up the same
 * way ({@link #giveUp}), and a rank still joining a generation that was given up follows the counter
 * ({@link #current}) instead of waiting out its deadline.
 *
 * <p>Generation 0 keeps the keys where they always were (no prefix), so a world that never re-forms
 * writes exactly the keys it did before generations existed.
 */
public final class WorldGeneration {
    /** The counter of the generation ranks join now (a decimal number, as ADD writes it). */
    static final String KEY = "symmem/world/generation";
    /** Counted up once by every rank that joins a generation, under that generation's prefix. */
    static final String JOINS_KEY = "symmem/world/joins";
    /** Where generation g's keys live (g > 0): {@code symmem/gen/<g>/<key>}. */
    static final String PREFIX = "symmem/gen/";
    /** More moves than this in one join means something else keeps moving the counter: stop and say so. */
    private static final int MAX_MOVES = 1000;

    private WorldGeneration() {
    }

    /** The store as generation {@code generation} sees it: its own prefix, none for generation 0. */
    public static Store scoped(Store runStore, long generation) {
        return generation == 0 ? runStore : new PrefixStore(PREFIX + generation, runStore);
    }

    /** The generation ranks join now (0 when no rank ever joined this store under this run). */
    static long current(Store runStore, Duration timeout) {
        return runStore.add(KEY, 0).await().atMost(timeout);
    }

    /**
     * Counts this rank into the generation ranks join now (at least {@code atLeast}), moving on past
     * every generation that is full already; returns the generation it counted itself into.
     */
    static long enter(Store runStore, int worldSize, long atLeast, Duration timeout) {
        raise(runStore, atLeast, timeout);
        for (int moves = 0; moves < MAX_MOVES; moves++) {
            long generation = current(runStore, timeout);
            long joins = scoped(runStore, generation).add(JOINS_KEY, 1).await().atMost(timeout);
            if (joins <= worldSize) {
                return generation;
            }
            giveUp(runStore, generation, timeout);
        }
        throw new IllegalStateException("the world's generation counter " + KEY + " moved " + MAX_MOVES
                + " times while this rank joined: more processes than WORLD_SIZE=" + worldSize
                + " keep joining this store under the same run (give each job its own SYMMEM_RUN_ID)");
    }

    /**
     * Moves the counter up to {@code atLeast} where it is below: a survivor that knew generation g comes
     * to a store that started again (its host restarted) and would count from 0; the world's generations
     * go on from g + 1 instead, and a rank that entered a lower one meanwhile follows (it watches).
     */
    private static void raise(Store runStore, long atLeast, Duration timeout) {
        for (int moves = 0; moves < MAX_MOVES; moves++) {
            long now = current(runStore, timeout);
            if (now >= atLeast) {
                return;
            }
            runStore.compareSet(KEY, decimal(now), decimal(atLeast)).await().atMost(timeout);
        }
    }

    /**
     * Generation {@code generation} can no longer form or go on: moves the counter past it, unless some
     * rank did already (then this changes nothing).
     */
    static void giveUp(Store runStore, long generation, Duration timeout) {
        runStore.compareSet(KEY, decimal(generation), decimal(generation + 1)).await().atMost(timeout);
    }

    /** {@link #giveUp}, where a store that cannot be reached any more only gets a line in the debug log. */
    static void giveUpQuietly(Store runStore, long generation, Duration timeout) {
        try {
            giveUp(runStore, generation, timeout);
        } catch (RuntimeException e) {
            org.jboss.logging.Logger.getLogger(WorldGeneration.class)
                    .debugf("could not move the world past generation %d: %s", generation, e.getMessage());
        }
    }

    private static byte[] decimal(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }
}
