package io.symmem.store;

import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counts of operations the server has served, per query type, from TCP connections and from the
 * in-process {@link LocalStore} alike. Touched only on the server's context, like {@link StoreState}.
 */
final class StoreStatistics {

    private final EnumMap<QueryType, Long> served = new EnumMap<>(QueryType.class);
    private long connectionsAccepted;
    private long connectionsClosedStuck;

    void served(QueryType type) {
        served.merge(type, 1L, Long::sum);
    }

    void accepted() {
        connectionsAccepted++;
    }

    /** A connection was closed for its answer queue (hard bound or drain time limit). */
    void closedStuck() {
        connectionsClosedStuck++;
    }

    StoreStats snapshot(StoreState state, Collection<StoreServerConnection> connections) {
        long queued = 0;
        int backedUp = 0;
        for (StoreServerConnection connection : connections) {
            StoreConnectionStats figures = connection.stats();
            queued += figures.answerBytesQueued();
            backedUp += figures.backedUp() ? 1 : 0;
        }
        Map<String, Long> ops = new LinkedHashMap<>();
        for (Map.Entry<QueryType, Long> entry : served.entrySet()) {
            ops.put(entry.getKey().name(), entry.getValue());
        }
        return new StoreStats(state.size(), state.queueCount(), connections.size(), connectionsAccepted,
                state.pendingWaits(), Map.copyOf(ops), queued, backedUp, connectionsClosedStuck);
    }
}
