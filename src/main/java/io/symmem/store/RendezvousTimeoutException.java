package io.symmem.store;

import java.util.List;

/**
 * A {@link StoreExchange} collective passed its deadline. Names the group, the round and the ranks
 * whose contribution never arrived, so an operator can see at once which process is stuck or gone.
 */
public final class RendezvousTimeoutException extends StoreTimeoutException {

    private final String groupName;
    private final long round;
    private final List<Integer> missingRanks;

    public RendezvousTimeoutException(
            String message, List<String> missingKeys, String groupName, long round, List<Integer> missingRanks) {
        super(message, missingKeys);
        this.groupName = groupName;
        this.round = round;
        this.missingRanks = List.copyOf(missingRanks);
    }

    public String groupName() {
        return groupName;
    }

    public long round() {
        return round;
    }

    /** Ranks (within the group) whose key was still absent after the deadline. */
    public List<Integer> missingRanks() {
        return missingRanks;
    }
}
