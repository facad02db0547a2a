package io.symmem.store.server;

import io.symmem.store.wire.QueryType;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counts of what the server has served: operations per query type (TCP connections and the
 * in-process {@link LocalStore} alike), connections accepted, open, and closed for a stuck answer
 * queue. Written on the server's context only; held in atomics so that metrics read them from any
 * thread, exact at the moment they are read, without a copy that lags behind (see {@link StoreFigures}).
 */
final class StoreStatistics {

    private final AtomicLongArray served = new AtomicLongArray(QueryType.values().length);
    private final AtomicLong connectionsAccepted = new AtomicLong();
    private final AtomicInteger openConnections = new AtomicInteger();
    private final AtomicLong connectionsClosedStuck = new AtomicLong();

    void served(QueryType type) {
        served.incrementAndGet(type.ordinal());
    }

    /** A connection was accepted; it is open until {@link #closed()}. */
    void accepted() {
        connectionsAccepted.incrementAndGet();
        openConnections.incrementAndGet();
    }

    void closed() {
        openConnections.decrementAndGet();
    }

    /** A connection was closed for its answer queue (hard bound or drain time limit). */
    void closedStuck() {
        connectionsClosedStuck.incrementAndGet();
    }

    long served(String queryType) {
        return served.get(QueryType.valueOf(queryType).ordinal());
    }

    long connectionsAccepted() {
        return connectionsAccepted.get();
    }

    int openConnections() {
        return openConnections.get();
    }

    long connectionsClosedStuck() {
        return connectionsClosedStuck.get();
    }

    /** On the server's context: the connections' queues are read there. */
    StoreStats snapshot(StoreState state, Collection<StoreServerConnection> connections) {
        long queued = 0;
        int backedUp = 0;
        for (StoreServerConnection connection : connections) {
            StoreConnectionStats figures = connection.stats();
            queued += figures.answerBytesQueued();
            backedUp += figures.backedUp() ? 1 : 0;
        }
        Map<String, Long> ops = new LinkedHashMap<>();
        for (QueryType type : QueryType.values()) {
            long count = served.get(type.ordinal());
            if (count > 0) {
                ops.put(type.name(), count);
            }
        }
        return new StoreStats(state.size(), state.queueCount(), openConnections.get(), connectionsAccepted.get(),
                state.pendingWaits(), Map.copyOf(ops), queued, backedUp, connectionsClosedStuck.get());
    }
}
