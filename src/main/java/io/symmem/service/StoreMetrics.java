package io.symmem.service;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.symmem.store.StoreServer;
import io.symmem.store.StoreStats;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;
import org.jboss.logging.Logger;

/**
 * The store's figures as Micrometer meters (Prometheus at /q/metrics) on the rank that hosts it:
 * {@code symmem_store_keys}, {@code symmem_store_connections_open}, {@code symmem_store_waits_pending},
 * {@code symmem_store_connections_accepted_total} and {@code symmem_store_requests_total{op=...}}.
 *
 * <p>The figures live on the store's own event loop; a scrape must not wait for it, so they are
 * copied from there every {@value #REFRESH_MILLIS} ms and the meters read the last copy.
 */
@ApplicationScoped
public class StoreMetrics {
    private static final Logger LOG = Logger.getLogger(StoreMetrics.class);
    static final long REFRESH_MILLIS = 2_000;

    @Inject
    MeterRegistry registry;
    @Inject
    Vertx vertx;

    private volatile StoreStats latest;
    private final Set<String> opsRegistered = ConcurrentHashMap.newKeySet();
    private long timer = -1;

    /** Starts publishing {@code server}'s figures. */
    synchronized void watch(StoreServer server) {
        if (timer >= 0) {
            return;
        }
        gauge("symmem.store.keys", "Keys holding a value", StoreStats::keys);
        gauge("symmem.store.connections.open", "TCP connections open now", StoreStats::openConnections);
        gauge("symmem.store.waits.pending", "WAITs the server holds unanswered", StoreStats::pendingWaits);
        FunctionCounter.builder("symmem.store.connections.accepted", this, m -> m.value(StoreStats::connectionsAccepted))
                .description("TCP connections accepted since the store started").register(registry);
        refresh(server);
        timer = vertx.setPeriodic(REFRESH_MILLIS, id -> refresh(server));
    }

    /** Stops copying (the store is about to stop); the meters keep their last values. */
    synchronized void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
            timer = -1;
        }
    }

    private void gauge(String name, String description, ToDoubleFunction<StoreStats> figure) {
        Gauge.builder(name, this, m -> m.value(figure)).description(description).register(registry);
    }

    private double value(ToDoubleFunction<StoreStats> figure) {
        StoreStats stats = latest;
        return stats == null ? Double.NaN : figure.applyAsDouble(stats);
    }

    private void refresh(StoreServer server) {
        server.stats().subscribe().with(stats -> {
            latest = stats;
            stats.opsServed().keySet().forEach(this::registerOp);
        }, e -> LOG.debugf("store figures not refreshed: %s", e.getMessage()));
    }

    /** One counter per query type, made when the type is first served. */
    private void registerOp(String op) {
        if (opsRegistered.add(op)) {
            FunctionCounter.builder("symmem.store.requests", this, m -> m.value(s -> s.opsServed().getOrDefault(op, 0L)))
                    .tag("op", op.toLowerCase(Locale.ROOT))
                    .description("Requests served, TCP and in-process, by query type").register(registry);
        }
    }
}
