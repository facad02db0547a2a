package io.symmem.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.symmem.memory.PoolFigures;
import io.symmem.memory.PoolOptions;
import io.symmem.memory.SymmetricAllocator;
import io.symmem.memory.SymmetricMemPool;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeBackend;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The pool's meters read the pool's figures at each scrape, tagged with its group and number. */
class PoolMetricsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @Test
    void metersFollowThePoolsFigures() throws Exception {
        try (ThreadRanks ranks = new ThreadRanks(1, TIMEOUT)) {
            ranks.run(1, rank -> () -> {
                try (TcpStoreClient store = ranks.client(); NativeBackend backend = new NativeBackend("host", -1)) {
                    SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                    StoreExchange group = new StoreExchange(store, "metrics", 0, 1);
                    MeterRegistry registry = new SimpleMeterRegistry();
                    PoolMetrics metrics = new PoolMetrics();
                    metrics.registry = registry;
                    try (SymmetricMemPool pool = new SymmetricMemPool(allocator, group,
                            PoolOptions.defaults(TIMEOUT).withSegmentBytes(1 << 20))) {
                        metrics.watch(pool, 3);
                        SymmetricMemory a = pool.allocate(5000);
                        SymmetricMemory b = pool.allocate(70000);
                        PoolFigures f = pool.figures();
                        assertThat(gauge(registry, "symmem.pool.reserved.bytes")).isEqualTo(f.reservedBytes()).isEqualTo(1 << 20);
                        assertThat(gauge(registry, "symmem.pool.allocated.bytes")).isEqualTo(f.allocatedBytes())
                                .isEqualTo(8192 + 73728);
                        assertThat(gauge(registry, "symmem.pool.requested.bytes")).isEqualTo(75000);
                        assertThat(gauge(registry, "symmem.pool.live.blocks")).isEqualTo(2);
                        assertThat(gauge(registry, "symmem.pool.segments")).isEqualTo(1);
                        a.close();
                        // Read again at the next scrape: the freed block is gone from the figures.
                        assertThat(gauge(registry, "symmem.pool.live.blocks")).isEqualTo(1);
                        assertThat(gauge(registry, "symmem.pool.peak.allocated.bytes")).isEqualTo(8192 + 73728);
                        assertThat(registry.get("symmem.pool.allocations").tag("group", "metrics").tag("pool", "3")
                                .functionCounter().count()).isEqualTo(2);
                        assertThat(registry.get("symmem.pool.frees").functionCounter().count()).isEqualTo(1);
                        b.close();
                    }
                }
                return null;
            }).get(0).get();
        }
    }

    private static double gauge(MeterRegistry registry, String name) {
        return registry.get(name).tag("group", "metrics").tag("pool", "3").gauge().value();
    }
}
