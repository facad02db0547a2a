package io.symmem.liveness;

import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;

/**
 * Why this rank's world can no longer work: ranks that are gone, or the store that every rank needs.
 *
 * @param ranks the ranks known to be gone (sorted; may be empty when only the store is lost)
 * @param reason one line for people: who is gone and how it was noticed
 * @param storeLost the store itself is gone (or not answering): no store operation can succeed
 * @param at when this rank learned it (wall clock, for the chaos report and the logs)
 */
public record WorldFailure(Set<Integer> ranks, String reason, boolean storeLost, Instant at) {
    public WorldFailure {
        ranks = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(ranks));
    }

    /** The ranks as "[1, 3]", sorted. */
    public String rankList() {
        return new TreeSet<>(ranks).toString();
    }

    /** The error for an operation that this failure cut short. */
    public PeerLostException abort(String operation) {
        return new PeerLostException(operation, this);
    }
}
