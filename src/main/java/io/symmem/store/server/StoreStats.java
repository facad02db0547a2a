package io.symmem.store.server;

import java.util.Map;

/**
 * A snapshot of the store server's state, for the HTTP stats route and diagnostics.
 *
 * @param keys number of keys holding a value (what GETNUMKEYS answers)
 * @param queues number of non-empty queues
 * @param openConnections TCP connections open now
 * @param connectionsAccepted TCP connections accepted since the server started
 * @param pendingWaits waits the server holds unanswered (TCP and in-process)
 * @param opsServed operations served per query type name (e.g. "SET"), TCP and in-process together
 * @param answerBytesQueued answer bytes encoded for clients that their sockets have not taken yet, all connections
 * @param connectionsBackedUp connections whose unsent answers are at the soft bound now (not read, requests waiting)
 * @param connectionsClosedStuck connections closed since the start for passing the hard bound or the drain time limit
 */
public record StoreStats(long keys, long queues, int openConnections, long connectionsAccepted, int pendingWaits,
        Map<String, Long> opsServed, long answerBytesQueued, int connectionsBackedUp, long connectionsClosedStuck) {}
