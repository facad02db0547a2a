package io.symmem.store;

/**
 * A {@link StoreExchange} round in which the members made different calls (a barrier on one, an
 * all-gather on another; an allocation of one caller against another's). Every member saw every
 * member's call, so the round failed alike on all of them and the group stays in step: the next call
 * pairs as before.
 */
public final class ExchangeMismatchException extends StoreException {
    private final String groupName;
    private final long round;

    ExchangeMismatchException(String message, String groupName, long round) {
        super(message);
        this.groupName = groupName;
        this.round = round;
    }

    public String groupName() {
        return groupName;
    }

    public long round() {
        return round;
    }
}
