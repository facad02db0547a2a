package io.symmem.store;

/**
 * A {@link StoreExchange} call refused because the group's members no longer agree on which call is
 * which: a member abandoned a round (its deadline passed, its wait was cut short, its store failed) or
 * members paired different calls in one round. From then on every call of that exchange fails with
 * this, on every member whose call meets the round, rather than pairing with a value of another call.
 * What to do: make a new group (or a new exchange) and go on there.
 */
public final class ExchangeOutOfStepException extends StoreException {
    private final String groupName;
    private final long sinceRound;
    private final String reason;

    ExchangeOutOfStepException(String message, String groupName, long sinceRound, String reason) {
        super(message);
        this.groupName = groupName;
        this.sinceRound = sinceRound;
        this.reason = reason;
    }

    /** The first failure, as the member that had it told it: what a member that meets this one passes on. */
    public String reason() {
        return reason;
    }

    public String groupName() {
        return groupName;
    }

    /** The first round that did not end well on some member. */
    public long sinceRound() {
        return sinceRound;
    }
}
