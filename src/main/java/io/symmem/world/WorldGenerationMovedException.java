package io.symmem.world;

/**
 * A join was cut short because its generation of the world was given up while this rank joined it (a
 * rank's join failed there, or a restarted rank found it formed already): join again, and the member
 * goes to the generation the store names now.
 */
public final class WorldGenerationMovedException extends IllegalStateException {
    private final long from;
    private final long to;

    public WorldGenerationMovedException(int rank, long from, long to, Throwable cause) {
        super("rank " + rank + " joined generation " + from + " of its world, which was given up meanwhile: the world "
                + "forms again as generation " + to + " (join again)", cause);
        this.from = from;
        this.to = to;
    }

    /** The generation this rank was joining. */
    public long from() {
        return from;
    }

    /** The generation the store names now. */
    public long to() {
        return to;
    }
}
