package io.symmem.collective;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.memory.SymmetricAllocator;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * NativeCore.abort from Java: rank 0 of two (threads, host backend) waits in a barrier and in an
 * all-reduce for a rank that never comes, with a deadline of minutes; the abort ends both with
 * {@link NativeException.Aborted} carrying the reason. The abort is process-wide: reset after.
 */
class NativeAbortTest {
    private static final Duration LONG = Duration.ofMinutes(5);

    @AfterEach
    void reset() {
        NativeCore.resetAbort();
    }

    @Test
    void waitsForARankThatNeverComesEndWithTheAbortReason() throws Exception {
        CountDownLatch rank0Done = new CountDownLatch(1);
        try (ThreadRanks ranks = new ThreadRanks(2, Duration.ofSeconds(20))) {
            List<Future<String>> results = ranks.run(2, rank -> () -> {
                try (TcpStoreClient store = ranks.client(); NativeBackend backend = new NativeBackend("host", -1)) {
                    SymmetricAllocator allocator = new SymmetricAllocator(backend, LONG);
                    try (SymmetricMemory memory = allocator.allocate(new StoreExchange(store, "abort", rank, 2), 4096,
                            Duration.ofSeconds(20))) {
                        if (rank == 1) {
                            rank0Done.await(60, TimeUnit.SECONDS); // mapped, but never enters a wait
                            return "idle";
                        }
                        // Warm the call path first (class loading, JIT), so that the barrier below is
                        // surely waiting when the abort comes half a second later.
                        assertThatThrownBy(() -> memory.barrier(2, Duration.ofMillis(50)))
                                .isInstanceOf(NativeException.Timeout.class);
                        Thread aborter = new Thread(() -> {
                            sleep(500);
                            NativeCore.abort("rank 1 is gone (test)");
                        });
                        long t0 = System.nanoTime();
                        aborter.start();
                        RuntimeException cutShort = null;
                        try {
                            memory.barrier(3, LONG);
                        } catch (RuntimeException e) {
                            cutShort = e;
                        }
                        long took = System.nanoTime() - t0;
                        assertThat(cutShort).isInstanceOf(NativeException.Aborted.class)
                                .hasMessageContaining("barrier(channel 3) waiting for rank(s) 1: aborted: rank 1 is gone (test)");
                        assertThat(Duration.ofNanos(took)).isLessThan(Duration.ofSeconds(30));
                        aborter.join();
                        assertThat(NativeCore.aborted()).isTrue();
                        try (LocalBuffer out = memory.allocateLocal(64)) {
                            assertThatThrownBy(() -> AllReduce.run(memory, Algorithm.ONE_SHOT, DType.FLOAT32, ReduceOp.SUM,
                                    16, out, null, LONG))
                                    .isInstanceOf(NativeException.Aborted.class).hasMessageContaining("rank 1 is gone (test)");
                        }
                        NativeCore.resetAbort();
                        assertThatThrownBy(() -> memory.barrier(4, Duration.ofMillis(200)))
                                .isInstanceOf(NativeException.Timeout.class).hasMessageContaining("rank(s) 1");
                        rank0Done.countDown();
                        return "aborted";
                    }
                } finally {
                    rank0Done.countDown();
                }
            });
            assertThat(results.get(0).get(60, TimeUnit.SECONDS)).isEqualTo("aborted");
            assertThat(results.get(1).get(60, TimeUnit.SECONDS)).isEqualTo("idle");
        }
        assertThatThrownBy(() -> NativeCore.abort(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
