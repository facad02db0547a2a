package io.symmem.store.server;

import io.symmem.store.wire.QueryType;
import java.util.Arrays;
import java.util.List;

/**
 * The store server's figures as they are now, readable from any thread without a trip to the
 * server's loop: what metrics publish. Each figure is exact at the moment it is read (the server
 * writes them as it serves); two figures read one after the other may be a request apart.
 */
public final class StoreFigures {
    /** Every query type the store serves, by TCPStore name ("SET", "GET", ...). */
    public static final List<String> QUERY_TYPES = Arrays.stream(QueryType.values()).map(Enum::name).toList();

    private final StoreState state;
    private final StoreStatistics statistics;

    StoreFigures(StoreState state, StoreStatistics statistics) {
        this.state = state;
        this.statistics = statistics;
    }

    /** Keys holding a value (what GETNUMKEYS answers). */
    public long keys() {
        return state.keyCount();
    }

    /** TCP connections open now. */
    public int openConnections() {
        return statistics.openConnections();
    }

    /** TCP connections accepted since the server started. */
    public long connectionsAccepted() {
        return statistics.connectionsAccepted();
    }

    /** WAITs the server holds unanswered, TCP and in-process. */
    public int pendingWaits() {
        return state.pendingWaitCount();
    }

    /** Requests of one of {@link #QUERY_TYPES} served so far, TCP and in-process. */
    public long served(String queryType) {
        return statistics.served(queryType);
    }
}
