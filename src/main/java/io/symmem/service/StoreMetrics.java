package io.symmem.service;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.symmem.store.server.StoreFigures;
import io.symmem.store.server.StoreServer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The store's figures as Micrometer meters (Prometheus at /q/metrics) on the rank that hosts it:
 * {@code symmem_store_keys}, {@code symmem_store_connections_open}, {@code symmem_store_waits_pending},
 * {@code symmem_store_connections_accepted_total} and {@code symmem_store_requests_total{op=...}} (one
 * series per query type, from 0).
 *
 * <p>Every meter reads the server's {@link StoreFigures} when it is scraped: counters the server
 * writes as it serves, readable from any thread, so a scrape shows what the store holds at that
 * moment and never waits for the store's loop.
 */
@ApplicationScoped
public class StoreMetrics {

    @Inject
    MeterRegistry registry;

    /** Held here: Micrometer keeps only weak references to what its meters read. */
    private StoreFigures figures;

    /** Starts publishing {@code server}'s figures; later calls (another server) are ignored. */
    synchronized void watch(StoreServer server) {
        if (figures != null) {
            return;
        }
        figures = server.figures();
        gauge("symmem.store.keys", "Keys holding a value", StoreFigures::keys);
        gauge("symmem.store.connections.open", "TCP connections open now", StoreFigures::openConnections);
        gauge("symmem.store.waits.pending", "WAITs the server holds unanswered", StoreFigures::pendingWaits);
        FunctionCounter.builder("symmem.store.connections.accepted", figures, StoreFigures::connectionsAccepted)
                .description("TCP connections accepted since the store started").register(registry);
        for (String op : StoreFigures.QUERY_TYPES) {
            FunctionCounter.builder("symmem.store.requests", figures, f -> f.served(op))
                    .tag("op", op.toLowerCase(Locale.ROOT))
                    .description("Requests served, TCP and in-process, by query type").register(registry);
        }
    }

    private void gauge(String name, String description, ToDoubleFunction<StoreFigures> figure) {
        Gauge.builder(name, figures, figure).description(description).register(registry);
    }
}
