package io.symmem.store;

import java.util.List;

/**
 * A {@link StoreExchange} collective was cut short ({@link StoreWaitAbortedException}); names the
 * group, the round, why, and the ranks whose contribution had not arrived yet.
 */
public final class RendezvousAbortedException extends StoreWaitAbortedException {
    private final String reason;
    private final List<Integer> missingRanks;

    RendezvousAbortedException(String message, StoreWaitAbortedException cause, List<Integer> missingRanks) {
        super(message, cause);
        this.reason = cause.reason();
        this.missingRanks = List.copyOf(missingRanks);
    }

    @Override
    public String reason() {
        return reason;
    }

    /** Ranks (within the group) whose key was absent when the wait was cut short. */
    public List<Integer> missingRanks() {
        return missingRanks;
    }
}
