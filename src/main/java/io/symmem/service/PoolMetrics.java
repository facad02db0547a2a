package io.symmem.service;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.symmem.memory.PoolFigures;
import io.symmem.memory.SymmetricMemPool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The memory pools' figures as Micrometer meters (Prometheus at /q/metrics), tagged with the pool's
 * group and its number on this rank: {@code symmem_pool_reserved_bytes}, {@code _allocated_bytes},
 * {@code _requested_bytes}, {@code _held_bytes}, {@code _peak_allocated_bytes},
 * {@code _largest_free_bytes}, {@code _segments}, {@code _live_blocks}, {@code _fragmentation} and the
 * counters {@code symmem_pool_allocations_total} and {@code symmem_pool_frees_total}. Each scrape
 * reads the pool's figures at that moment (a short lock of the pool, no waiting on peers).
 */
@ApplicationScoped
public class PoolMetrics {

    @Inject
    MeterRegistry registry;

    /** Held here: Micrometer keeps only weak references to what its meters read. */
    private final List<SymmetricMemPool> watched = new ArrayList<>();

    synchronized void watch(SymmetricMemPool pool, int number) {
        watched.add(pool);
        Tags tags = Tags.of("group", pool.group(), "pool", Integer.toString(number));
        gauge(pool, tags, "symmem.pool.reserved.bytes", "Bytes of the pool's symmetric segments", PoolFigures::reservedBytes);
        gauge(pool, tags, "symmem.pool.allocated.bytes", "Bytes of live blocks (rounded to the alignment)",
                PoolFigures::allocatedBytes);
        gauge(pool, tags, "symmem.pool.requested.bytes", "Bytes live blocks were asked for", PoolFigures::requestedBytes);
        gauge(pool, tags, "symmem.pool.held.bytes", "Bytes of freed blocks waiting for a stream", PoolFigures::heldBytes);
        gauge(pool, tags, "symmem.pool.peak.allocated.bytes", "Most bytes allocated at once", PoolFigures::peakAllocatedBytes);
        gauge(pool, tags, "symmem.pool.largest.free.bytes", "Largest free range", PoolFigures::largestFreeBytes);
        gauge(pool, tags, "symmem.pool.segments", "Segments (one rendezvous each)", PoolFigures::segments);
        gauge(pool, tags, "symmem.pool.live.blocks", "Blocks handed out and not freed", PoolFigures::liveBlocks);
        gauge(pool, tags, "symmem.pool.fragmentation", "1 - largest free range / free bytes", PoolFigures::fragmentation);
        FunctionCounter.builder("symmem.pool.allocations", pool, p -> p.figures().allocations()).tags(tags)
                .description("Pool allocations").register(registry);
        FunctionCounter.builder("symmem.pool.frees", pool, p -> p.figures().frees()).tags(tags)
                .description("Pool frees").register(registry);
    }

    private void gauge(SymmetricMemPool pool, Tags tags, String name, String description,
            ToDoubleFunction<PoolFigures> figure) {
        Gauge.builder(name, pool, p -> figure.applyAsDouble(p.figures())).tags(tags).description(description)
                .register(registry);
    }
}
