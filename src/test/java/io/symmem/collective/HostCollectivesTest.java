package io.symmem.collective;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.memory.SymmetricAllocator;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeStream;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Java collective API and host <-> buffer copies on the host backend: three ranks as threads. */
class HostCollectivesTest {
    private static final int WORLD = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private ThreadRanks ranks;

    interface RankBody {
        void run(int rank, SymmetricMemory memory) throws Exception;
    }

    @BeforeEach
    void start() {
        ranks = new ThreadRanks(WORLD, TIMEOUT);
    }

    @AfterEach
    void stop() throws InterruptedException {
        ranks.close();
    }

    private void onRanks(String group, long bytes, RankBody body) throws Exception {
        List<Future<Object>> futures = ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client(); NativeBackend backend = new NativeBackend("host", -1)) {
                SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                try (SymmetricMemory memory = allocator.allocate(new StoreExchange(store, group, rank, WORLD), bytes, TIMEOUT)) {
                    body.run(rank, memory);
                }
            }
            return null;
        });
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    static float in(int rank, int i, int round) {
        return ((i * 7919 + rank * 104729 + round * 31) % 2001) / 500.0f - 2.0f;
    }

    @Test
    void copiesRoundTripAtOffsetsForArraysAndBuffers() throws Exception {
        onRanks("copies", 1 << 16, (rank, memory) -> {
            float[] f = {1.5f, -2f, 3.25f, rank};
            memory.copyFrom(f, 64);
            float[] back = new float[6];
            memory.copyTo(back, 1, 4, 64);
            assertThat(back).containsExactly(0f, 1.5f, -2f, 3.25f, rank, 0f);
            assertThat(memory.local().getFloat(64 + 8)).isEqualTo(3.25f); // the host view sees it too
            short[] bits = {(short) 0x3f80, (short) 0xc000, 7};
            memory.copyFrom(bits, 1000);
            short[] bitsBack = new short[3];
            memory.copyTo(bitsBack, 1000);
            assertThat(bitsBack).containsExactly(bits);
            // A direct buffer with a position, and a heap buffer: their remaining bytes move, positions advance.
            ByteBuffer direct = ByteBuffer.allocateDirect(16);
            direct.put(new byte[] {9, 9, 9, 9, 1, 2, 3, 4}).flip().position(4);
            memory.copyFrom(direct, 2000);
            assertThat(direct.position()).isEqualTo(8);
            ByteBuffer heap = ByteBuffer.allocate(6);
            heap.position(2);
            memory.copyTo(heap, 2000);
            assertThat(heap.position()).isEqualTo(6);
            assertThat(heap.array()).containsExactly(0, 0, 1, 2, 3, 4);
            ByteBuffer directOut = ByteBuffer.allocateDirect(4);
            memory.copyTo(directOut, 2000);
            assertThat(directOut.get(0)).isEqualTo((byte) 1);
            assertThat(directOut.get(3)).isEqualTo((byte) 4);
            // Large arrays go through the staging chunks.
            float[] big = new float[(1 << 16) / 4];
            for (int i = 0; i < big.length; i++) {
                big[i] = i * 0.5f + rank;
            }
            memory.copyFrom(big, 0);
            float[] bigBack = new float[big.length];
            memory.copyTo(bigBack, 0);
            assertThat(bigBack).containsExactly(big);
            memory.barrier(1);
            // A peer's buffer through copyFromPeer.
            int peer = (rank + 1) % WORLD;
            ByteBuffer theirs = ByteBuffer.allocateDirect(8).order(ByteOrder.nativeOrder());
            memory.copyFromPeer(peer, 4, theirs);
            assertThat(theirs.getFloat(0)).isEqualTo(0.5f + peer);
            memory.barrier(1);
            // Range errors name the offset, the size and the buffer.
            assertThatThrownBy(() -> memory.copyFrom(new float[4], (1 << 16) - 8))
                    .isInstanceOf(NativeException.InvalidArgument.class)
                    .hasMessageContaining("offset 65528 + bytes 16 exceed the symmetric buffer's 65536 bytes");
            assertThatThrownBy(() -> memory.copyTo(new float[4], 3, 2, 0))
                    .isInstanceOf(NativeException.InvalidArgument.class).hasMessageContaining("array range [3, 5)");
            assertThatThrownBy(() -> memory.copyTo(new float[1], -4))
                    .isInstanceOf(NativeException.InvalidArgument.class).hasMessageContaining("offset -4");
        });
    }

    @Test
    void allReduceEveryOpAlgorithmInAndOutOfPlace() throws Exception {
        int n = 1003;
        onRanks("allreduce", (long) n * 4, (rank, memory) -> {
            try (LocalBuffer out = memory.allocateLocal((long) n * 4); NativeStream stream = memory.createStream()) {
                assertThat(stream.isDefault()).isTrue();
                int round = 0;
                for (ReduceOp op : ReduceOp.values()) {
                    for (Algorithm algo : Algorithm.values()) {
                        for (boolean inPlace : new boolean[] {false, true}) {
                            round++;
                            float[] input = new float[n];
                            for (int i = 0; i < n; i++) {
                                input[i] = in(rank, i, round);
                            }
                            memory.copyFrom(input, 0);
                            if (algo == Algorithm.TWO_SHOT_CE) {
                                LocalBuffer target = inPlace ? null : out;
                                assertThatThrownBy(() -> AllReduce.run(memory, algo, DType.FLOAT32, op, n, target, stream, TIMEOUT))
                                        .isInstanceOf(NativeException.Unsupported.class)
                                        .hasMessageContaining("copy engines").hasMessageContaining("host backend");
                                continue;
                            }
                            AllReduce.run(memory, algo, DType.FLOAT32, op, n, inPlace ? null : out, stream, TIMEOUT);
                            memory.synchronize(stream);
                            float[] result = new float[n];
                            if (inPlace) {
                                memory.copyTo(result, 0);
                            } else {
                                out.copyTo(result, 0);
                            }
                            for (int i = 0; i < n; i++) {
                                double ref = in(0, i, round);
                                for (int r = 1; r < WORLD; r++) {
                                    double x = in(r, i, round);
                                    ref = switch (op) {
                                        case MAX -> Math.max(ref, x);
                                        case MIN -> Math.min(ref, x);
                                        default -> ref + x;
                                    };
                                }
                                if (op == ReduceOp.AVG) {
                                    ref /= WORLD;
                                }
                                if (Math.abs(result[i] - ref) > 1e-5) {
                                    throw new AssertionError(op + " " + algo + " inPlace=" + inPlace + " [" + i + "] "
                                            + result[i] + " vs " + ref);
                                }
                            }
                            memory.barrier(1); // all checked before the inputs change
                        }
                    }
                }
            }
        });
    }

    @Test
    void allGatherAndReduceScatterInAndOutOfPlace() throws Exception {
        int n = 257;
        onRanks("gather", (long) n * 4 * WORLD, (rank, memory) -> {
            try (LocalBuffer out = memory.allocateLocal((long) n * 4 * WORLD)) {
                float[] mine = new float[n];
                for (int i = 0; i < n; i++) {
                    mine[i] = rank * 1000 + i;
                }
                // out of place: the contribution at offset 0
                memory.copyFrom(mine, 0);
                AllGather.run(memory, DType.FLOAT32, n, out, null, TIMEOUT);
                float[] all = new float[n * WORLD];
                out.copyTo(all, 0);
                for (int p = 0; p < WORLD; p++) {
                    assertThat(all[p * n + 5]).isEqualTo(p * 1000 + 5);
                }
                memory.barrier(1);
                // in place: the contribution at block r
                memory.copyFrom(mine, (long) rank * n * 4);
                AllGather.run(memory, DType.FLOAT32, n, null, null, TIMEOUT);
                float[] inPlace = new float[n * WORLD];
                memory.copyTo(inPlace, 0);
                for (int p = 0; p < WORLD; p++) {
                    assertThat(inPlace[p * n + n - 1]).isEqualTo(p * 1000 + n - 1);
                }
                memory.barrier(1);
                // reduce-scatter: block b of rank r holds r + b*10 + i; rank r gets block r summed.
                float[] blocks = new float[n * WORLD];
                for (int b = 0; b < WORLD; b++) {
                    for (int i = 0; i < n; i++) {
                        blocks[b * n + i] = rank + b * 10 + i;
                    }
                }
                memory.copyFrom(blocks, 0);
                ReduceScatter.run(memory, DType.FLOAT32, ReduceOp.SUM, n, out, null, TIMEOUT);
                float[] mineReduced = new float[n];
                out.copyTo(mineReduced, 0);
                float sumOfRanks = WORLD * (WORLD - 1) / 2f;
                assertThat(mineReduced[3]).isEqualTo(sumOfRanks + WORLD * (rank * 10 + 3));
                memory.barrier(1);
                memory.copyFrom(blocks, 0);
                ReduceScatter.run(memory, DType.FLOAT32, ReduceOp.MAX, n, null, null, TIMEOUT);
                float[] block = new float[n];
                memory.copyTo(block, (long) rank * n * 4);
                assertThat(block[3]).isEqualTo(WORLD - 1 + rank * 10 + 3);
                memory.barrier(1);
            }
        });
    }

    @Test
    void bfloat16IsReducedOnTheHostToo() throws Exception {
        onRanks("bf16", 4096, (rank, memory) -> {
            // Small whole numbers are exact in bfloat16: its bits are a float's upper half.
            short[] mine = new short[16];
            for (int i = 0; i < mine.length; i++) {
                mine[i] = (short) (Float.floatToIntBits(rank + 1 + i) >>> 16);
            }
            memory.copyFrom(mine, 0);
            AllReduce.run(memory, Algorithm.AUTO, DType.BFLOAT16, ReduceOp.SUM, mine.length, null, null, TIMEOUT);
            short[] sum = new short[16];
            memory.copyTo(sum, 0);
            for (int i = 0; i < sum.length; i++) {
                float got = Float.intBitsToFloat((sum[i] & 0xffff) << 16);
                assertThat(got).isEqualTo(WORLD * (WORLD + 1) / 2f + WORLD * i);
            }
            memory.barrier(1);
        });
    }

    @Test
    void badArgumentsAreNamed() throws Exception {
        onRanks("errors", 4096, (rank, memory) -> {
            assertThatThrownBy(() -> AllReduce.run(memory, Algorithm.AUTO, DType.FLOAT32, ReduceOp.SUM, 1025, null, null, TIMEOUT))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("count 1025")
                    .hasMessageContaining("4100 bytes").hasMessageContaining("holds 4096");
            assertThatThrownBy(() -> AllReduce.run(memory, null, DType.FLOAT32, ReduceOp.SUM, 1, null, null, TIMEOUT))
                    .hasMessageContaining("algo must not be null");
            assertThatThrownBy(() -> AllReduce.run(memory, Algorithm.AUTO, DType.FLOAT32, ReduceOp.SUM, 1, null, null, Duration.ZERO))
                    .hasMessageContaining("timeout must be positive");
            try (LocalBuffer small = memory.allocateLocal(8)) {
                assertThatThrownBy(() -> AllReduce.run(memory, Algorithm.AUTO, DType.FLOAT32, ReduceOp.SUM, 16, small, null, TIMEOUT))
                        .hasMessageContaining("out holds 8 bytes");
                assertThatThrownBy(() -> AllGather.run(memory, DType.FLOAT32, 2, small, null, TIMEOUT))
                        .hasMessageContaining("out holds 8 bytes").hasMessageContaining("x world");
                assertThatThrownBy(() -> small.copyFrom(new float[3], 0))
                        .isInstanceOf(NativeException.InvalidArgument.class)
                        .hasMessageContaining("offset 0 + bytes 12 exceed the local allocation's 8 bytes");
            }
            assertThatThrownBy(() -> ReduceScatter.run(memory, DType.FLOAT32, ReduceOp.SUM, 342, null, null, TIMEOUT))
                    .hasMessageContaining("x world 3");
            assertThat(AllReduce.autoAlgorithm(memory, DType.FLOAT32, 16, false)).isNotEqualTo(Algorithm.AUTO);
            assertThatThrownBy(() -> memory.nativeBuffer().deviceUuid(-1))
                    .isInstanceOf(NativeException.Unsupported.class).hasMessageContaining("no GPU");
        });
    }

    @Test
    void parsersNameTheAllowedValues() {
        assertThat(DType.parse("BF16")).isEqualTo(DType.BFLOAT16);
        assertThat(DType.parse("float16")).isEqualTo(DType.FLOAT16);
        assertThat(Algorithm.parse("one_shot")).isEqualTo(Algorithm.ONE_SHOT);
        assertThat(Algorithm.parse("twoshot")).isEqualTo(Algorithm.TWO_SHOT);
        assertThat(Algorithm.parse("two-shot-ce")).isEqualTo(Algorithm.TWO_SHOT_CE);
        assertThat(Algorithm.parse("TWO_SHOT_CE")).isEqualTo(Algorithm.TWO_SHOT_CE);
        assertThat(Algorithm.parse("twoshotce")).isEqualTo(Algorithm.TWO_SHOT_CE);
        assertThat(Algorithm.TWO_SHOT_CE.code()).as("symmem.h: SYMMEM_ALGO_TWO_SHOT_CE").isEqualTo(3);
        assertThatThrownBy(() -> DType.parse("int8")).hasMessageContaining("fp32, bf16 or fp16");
        assertThatThrownBy(() -> Algorithm.parse("ring")).hasMessageContaining("auto, one-shot, two-shot or two-shot-ce");
    }
}
