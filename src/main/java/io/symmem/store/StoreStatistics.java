package io.symmem.store;

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

    void served(QueryType type) {
        served.merge(type, 1L, Long::sum);
    }

    void accepted() {
        connectionsAccepted++;
    }

    StoreStats snapshot(StoreState state, int openConnections) {
        Map<String, Long> ops = new LinkedHashMap<>();
        for (Map.Entry<QueryType, Long> entry : served.entrySet()) {
            ops.put(entry.getKey().name(), entry.getValue());
        }
        return new StoreStats(state.size(), state.queueCount(), openConnections, connectionsAccepted,
                state.pendingWaits(), Map.copyOf(ops));
    }
}
