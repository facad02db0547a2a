package io.symmem.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.collective.Algorithm;
import io.symmem.collective.AllReduce;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Four ranks as threads of one JVM, each with its own store client and host backend: the memory layer
 * and the one-shot all-reduce through the real store and the real native library.
 */
class SymmetricAllocatorTest {
    private static final int WORLD = 4;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private ThreadRanks ranks;

    @BeforeEach
    void start() {
        ranks = new ThreadRanks(WORLD, TIMEOUT);
    }

    @AfterEach
    void stop() throws InterruptedException {
        ranks.close();
    }

    /** Runs body on `count` ranks (of a world of WORLD) and returns each rank's result or failure. */
    private <T> List<Future<T>> onRanks(int count, IntFunction<Callable<T>> body) {
        return ranks.run(count, body);
    }

    private TcpStoreClient client() {
        return ranks.client();
    }

    @Test
    void peersSeeEachOthersWritesAndAllReduceIsExact() throws Exception {
        int count = 1_000_003;
        List<Future<float[]>> results = onRanks(WORLD, rank -> () -> {
            try (TcpStoreClient store = client(); NativeBackend backend = new NativeBackend("host", -1)) {
                SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                StoreExchange group = new StoreExchange(store, "world", rank, WORLD);
                try (SymmetricMemory memory = allocator.allocate(group, (long) count * Float.BYTES, TIMEOUT)) {
                    // Each rank writes its id into the next rank's buffer, directly.
                    memory.peer((rank + 1) % WORLD).putInt(count * Float.BYTES - 4, 100 + rank);
                    memory.barrier(1);
                    int fromPrevious = memory.local().getInt(count * Float.BYTES - 4);
                    assertThat(fromPrevious).isEqualTo(100 + (rank + WORLD - 1) % WORLD);
                    memory.barrier(1);
                    float[] input = new float[count];
                    for (int i = 0; i < count; i++) {
                        input[i] = (rank + 1) * 0.5f + (i % 97) * 0.25f;
                    }
                    memory.local().asFloatBuffer().put(input);
                    float[] result = new float[count];
                    try (LocalBuffer out = memory.allocateLocal((long) count * Float.BYTES)) {
                        AllReduce.run(memory, Algorithm.ONE_SHOT, DType.FLOAT32, ReduceOp.SUM, count, out, null, TIMEOUT);
                        out.copyTo(result, 0);
                    }
                    return result;
                }
            }
        });
        for (Future<float[]> f : results) {
            float[] result = f.get(60, TimeUnit.SECONDS);
            for (int i = 0; i < count; i++) {
                // 0.5 * (1+2+3+4) + 4 * 0.25 * (i % 97): exactly representable, so exact.
                float expected = 5.0f + (i % 97) * 1.0f;
                if (result[i] != expected) {
                    throw new AssertionError("element " + i + " is " + result[i] + ", expected " + expected);
                }
            }
        }
    }

    @Test
    void signalsPassBetweenTwoRanks() throws Exception {
        List<Future<Integer>> results = onRanks(2, rank -> () -> {
            try (TcpStoreClient store = client(); NativeBackend backend = new NativeBackend("host", -1)) {
                SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                try (SymmetricMemory memory = allocator.allocate(new StoreExchange(store, "pair", rank, 2), 64, TIMEOUT)) {
                    int peer = 1 - rank;
                    if (rank == 0) {
                        memory.peer(peer).putInt(0, 42);
                        memory.putSignal(peer, 3, TIMEOUT);
                        memory.waitSignal(peer, 3, TIMEOUT);
                        return memory.local().getInt(0);
                    }
                    memory.waitSignal(peer, 3, TIMEOUT);
                    int got = memory.local().getInt(0);
                    memory.peer(peer).putInt(0, got + 1);
                    memory.putSignal(peer, 3, TIMEOUT);
                    return got;
                }
            }
        });
        assertThat(results.get(0).get(30, TimeUnit.SECONDS)).isEqualTo(43);
        assertThat(results.get(1).get(30, TimeUnit.SECONDS)).isEqualTo(42);
    }

    @Test
    void differentSizesFailOnEveryRankNamingThem() throws Exception {
        List<Future<Object>> results = onRanks(WORLD, rank -> () -> {
            try (TcpStoreClient store = client(); NativeBackend backend = new NativeBackend("host", -1)) {
                SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                allocator.allocate(new StoreExchange(store, "world", rank, WORLD), rank == 2 ? 8192 : 4096, TIMEOUT);
                return null;
            }
        });
        for (Future<Object> f : results) {
            assertThat(failure(f)).isInstanceOf(RendezvousException.class)
                    .hasMessageContaining("rank 2: 8192 bytes").hasMessageContaining("rank 3: 4096 bytes");
        }
    }

    @Test
    void aMissingRankIsNamedWithinTheTimeout() throws Exception {
        Duration shortTimeout = Duration.ofMillis(1500);
        List<Future<Object>> results = onRanks(3, rank -> () -> {
            try (TcpStoreClient store = client(); NativeBackend backend = new NativeBackend("host", -1)) {
                new SymmetricAllocator(backend, TIMEOUT).allocate(new StoreExchange(store, "world", rank, WORLD), 4096, shortTimeout);
                return null;
            }
        });
        for (Future<Object> f : results) {
            assertThat(failure(f)).hasMessageContaining("rank(s) [3]");
        }
    }

    @Test
    void repeatedAllocationsLeaveNoFileDescriptorsBehind() throws Exception {
        // A warm-up round first: thread pools, Vert.x contexts and class loading open descriptors of
        // their own once; only what the cycles themselves leave behind is counted.
        allocateAndFree("warm-up", 5);
        long before = openFds();
        int cycles = 100;
        allocateAndFree("cycles", cycles);
        // A leak of one descriptor per buffer would leave 2 * cycles = 200 behind; the slack only
        // absorbs the JVM's own descriptors coming and going meanwhile (seen: +5).
        assertThat(openFds() - before).as("descriptors left after %d alloc/free cycles on 2 ranks", cycles)
                .isLessThan(20);
    }

    /** {@code cycles} allocations and frees on 2 ranks, in a group of its own (its keys start at round 0). */
    private void allocateAndFree(String groupName, int cycles) throws Exception {
        List<Future<Object>> results = onRanks(2, rank -> () -> {
            try (TcpStoreClient store = client(); NativeBackend backend = new NativeBackend("host", -1)) {
                SymmetricAllocator allocator = new SymmetricAllocator(backend, TIMEOUT);
                StoreExchange group = new StoreExchange(store, groupName, rank, 2);
                for (int i = 0; i < cycles; i++) {
                    try (SymmetricMemory memory = allocator.allocate(group, 1 << 16, TIMEOUT)) {
                        memory.barrier(2);
                    }
                }
                return null;
            }
        });
        for (Future<Object> f : results) {
            f.get(120, TimeUnit.SECONDS);
        }
    }

    private static long openFds() throws java.io.IOException {
        try (var files = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            return files.count();
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
