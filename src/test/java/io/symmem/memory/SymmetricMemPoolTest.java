package io.symmem.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.Algorithm;
import io.symmem.collective.AllGather;
import io.symmem.collective.AllReduce;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.collective.ReduceScatter;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeException;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pools of three ranks (threads of one JVM, each with its own store client and host backend):
 * collectives on pool blocks give the bits they give on dedicated buffers, segments are added only
 * when needed, a rank whose sequence differs is named, and the pool refuses what would break it.
 */
class SymmetricMemPoolTest {
    private static final int WORLD = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final long SEGMENT = 256 * 1024;
    private ThreadRanks ranks;

    @BeforeEach
    void start() {
        ranks = new ThreadRanks(WORLD, TIMEOUT);
    }

    @AfterEach
    void stop() throws InterruptedException {
        ranks.close();
    }

    interface RankBody<T> {
        T run(int rank, SymmetricAllocator allocator, StoreExchange group) throws Exception;
    }

    private <T> List<Future<T>> onRanks(RankBody<T> body) {
        return ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client(); NativeBackend backend = new NativeBackend("host", -1)) {
                return body.run(rank, new SymmetricAllocator(backend, TIMEOUT), new StoreExchange(store, "world", rank, WORLD));
            }
        });
    }

    private static PoolOptions options() {
        return PoolOptions.defaults(TIMEOUT).withSegmentBytes(SEGMENT);
    }

    private static float input(int rank, int i, int salt) {
        return ((i * 13 + rank * 101 + salt * 7) % 251) / 16.0f - 3.0f;
    }

    private static float[] run(SymmetricMemory m, int salt, int count, String what) {
        float[] in = new float[m.worldSize() * count];
        for (int i = 0; i < in.length; i++) {
            in[i] = input(m.rank(), i, salt);
        }
        m.copyFrom(in, 0);
        try (LocalBuffer out = m.allocateLocal((long) m.worldSize() * count * 4)) {
            switch (what) {
                case "sum" -> AllReduce.run(m, Algorithm.AUTO, DType.FLOAT32, ReduceOp.SUM, count, out, null, TIMEOUT);
                case "max-in-place" -> AllReduce.run(m, Algorithm.AUTO, DType.FLOAT32, ReduceOp.MAX, count, null, null, TIMEOUT);
                case "gather" -> AllGather.run(m, DType.FLOAT32, count, out, null, TIMEOUT);
                default -> ReduceScatter.run(m, DType.FLOAT32, ReduceOp.SUM, count, out, null, TIMEOUT);
            }
            float[] result = new float[m.worldSize() * count];
            if (what.equals("max-in-place")) {
                m.copyTo(result, 0);
            } else {
                ByteBuffer b = ByteBuffer.allocateDirect(result.length * 4).order(ByteOrder.nativeOrder());
                out.copyTo(b, 0);
                b.flip();
                b.asFloatBuffer().get(result);
            }
            m.barrier(2);  // every rank has read its result before anyone writes the next input
            return result;
        }
    }

    @Test
    void collectivesOnPoolBlocksEqualThoseOnDedicatedBuffers() throws Exception {
        String[] kinds = {"sum", "max-in-place", "gather", "scatter"};
        int[] counts = {1, 1000, 5000, 20000};  // the last ones span most of a segment: a second one is added
        List<Future<Integer>> results = onRanks((rank, allocator, group) -> {
            try (SymmetricMemPool pool = new SymmetricMemPool(allocator, group, options())) {
                List<SymmetricMemory> blocks = new ArrayList<>();
                for (int k = 0; k < kinds.length; k++) {
                    blocks.add(pool.allocate((long) WORLD * counts[k] * 4));
                }
                for (int k = 0; k < kinds.length; k++) {
                    float[] onPool = run(blocks.get(k), k, counts[k], kinds[k]);
                    float[] onOwn;
                    try (SymmetricMemory own = allocator.allocate(group, (long) WORLD * counts[k] * 4, TIMEOUT)) {
                        onOwn = run(own, k, counts[k], kinds[k]);
                    }
                    assertThat(onPool).as("%s of %d on a pool block", kinds[k], counts[k]).isEqualTo(onOwn);
                }
                // Blocks do not spill into each other: block 0's one input is still there after the others ran.
                float[] first = new float[1];
                blocks.get(3).copyTo(first, 0);
                assertThat(first[0]).isEqualTo(input(rank, 0, 3));
                int segments = pool.figures().segments();
                blocks.forEach(SymmetricMemory::close);
                PoolFigures f = pool.figures();
                assertThat(f.allocatedBytes()).isZero();
                assertThat(f.freeBytes()).isEqualTo(f.reservedBytes());
                // Everything free again, in one range per segment: the largest is one of two equal segments.
                assertThat(f.largestFreeBytes()).isEqualTo(SEGMENT);
                assertThat(f.fragmentation()).isEqualTo(0.5);
                return segments;
            }
        });
        for (Future<Integer> f : results) {
            assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(2);
        }
    }

    @Test
    void aRankThatAllocatesAnotherSizeIsNamedAtTheNextSegment() throws Exception {
        List<Future<Object>> results = onRanks((rank, allocator, group) -> {
            try (SymmetricMemPool pool = new SymmetricMemPool(allocator, group, options())) {
                SymmetricMemory a = pool.allocate(4096);
                SymmetricMemory b = pool.allocate(rank == 1 ? 8192 : 4096);  // fits: nobody notices yet
                try {
                    pool.allocate(SEGMENT);  // needs a segment: the ranks compare sequences there
                    return null;
                } finally {
                    a.close();
                    b.close();
                }
            }
        });
        for (Future<Object> f : results) {
            assertThat(failure(f)).isInstanceOf(PoolMismatchException.class)
                    .hasMessageContaining("rank 1's pool allocations differ from rank 0's")
                    .hasMessageContaining("operation #2 was 'allocate 4096 bytes' on rank 0 but 'allocate 8192 bytes' on rank 1");
        }
    }

    @Test
    void strictModeNamesTheRankAtTheAllocationItself() throws Exception {
        List<Future<Object>> results = onRanks((rank, allocator, group) -> {
            try (SymmetricMemPool pool = new SymmetricMemPool(allocator, group, options().withStrict(true))) {
                try (SymmetricMemory a = pool.allocate(rank == 2 ? 12288 : 4096)) {
                    return null;
                }
            }
        });
        for (Future<Object> f : results) {
            assertThat(failure(f)).isInstanceOf(PoolMismatchException.class)
                    .hasMessageContaining("at allocation #1")
                    .hasMessageContaining("'allocate 4096 bytes' on rank 0 but 'allocate 12288 bytes' on rank 2");
        }
    }

    @Test
    void blocksAreReusedWithoutAnotherSegmentAndTheFiguresAddUp() throws Exception {
        List<Future<PoolFigures>> results = onRanks((rank, allocator, group) -> {
            try (SymmetricMemPool pool = new SymmetricMemPool(allocator, group, options())) {
                for (int i = 0; i < 500; i++) {
                    SymmetricMemory x = pool.allocate(1000 + i);
                    SymmetricMemory y = pool.allocate(50_000);
                    x.close();
                    y.close();
                }
                SymmetricMemory kept = pool.allocate(100);
                PoolFigures f = pool.figures();
                kept.close();
                pool.verify();
                return f;
            }
        });
        for (Future<PoolFigures> r : results) {
            PoolFigures f = r.get(60, TimeUnit.SECONDS);
            assertThat(f.segments()).isEqualTo(1);
            assertThat(f.reservedBytes()).isEqualTo(SEGMENT);
            assertThat(f.allocatedBytes()).isEqualTo(4096);
            assertThat(f.requestedBytes()).isEqualTo(100);
            assertThat(f.peakAllocatedBytes()).isEqualTo(4096 + 53_248);
            assertThat(f.allocations()).isEqualTo(1001);
            assertThat(f.frees()).isEqualTo(1000);
            assertThat(f.freeBytes()).isEqualTo(SEGMENT - 4096);
        }
    }

    @Test
    void exhaustionIsAnErrorWithTheFiguresAndLiveBlocksKeepTheirSegment() throws Exception {
        List<Future<Object>> results = onRanks((rank, allocator, group) -> {
            SymmetricMemPool pool = new SymmetricMemPool(allocator, group, options().withLimitBytes(SEGMENT));
            SymmetricMemory a = pool.allocate(SEGMENT - 4096);
            assertThatThrownBy(() -> pool.allocate(8192)).isInstanceOf(PoolExhaustedException.class)
                    .hasMessageContaining("pool allocation of 8192 bytes failed")
                    .hasMessageContaining("limit of " + SEGMENT + " bytes (SYMMEM_POOL_LIMIT)")
                    .hasMessageContaining("reserved " + SEGMENT + " bytes, allocated " + (SEGMENT - 4096) + " in 1 block(s)");
            assertThatThrownBy(pool::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("still has 1 live block(s)");
            a.close();
            assertThatThrownBy(() -> pool.recordStream(a, null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("not a live block");
            pool.close();
            assertThatThrownBy(() -> pool.allocate(64)).hasMessageContaining("is closed");
            return null;
        });
        for (Future<Object> f : results) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void aSegmentWithALiveWindowRefusesToBeFreed() throws Exception {
        List<Future<Object>> results = onRanks((rank, allocator, group) -> {
            try (SymmetricMemory segment = allocator.allocate(group, 8192, TIMEOUT)) {
                var window = segment.nativeBuffer().slice(4096, 4096);
                assertThat(segment.nativeBuffer().liveSlices()).isEqualTo(1);
                assertThatThrownBy(() -> segment.nativeBuffer().close()).isInstanceOf(NativeException.class)
                        .hasMessageContaining("still has 1 live view");
                window.close();
                assertThat(segment.nativeBuffer().liveSlices()).isZero();
                return null;
            }
        });
        for (Future<Object> f : results) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    private static Throwable failure(Future<?> f) throws InterruptedException, java.util.concurrent.TimeoutException {
        try {
            f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected this rank to fail");
    }
}
