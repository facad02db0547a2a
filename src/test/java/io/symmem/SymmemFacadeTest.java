package io.symmem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.config.Backend;
import io.symmem.config.InvalidConfigurationException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The façade with two ranks as threads of this JVM, on the host backend. */
class SymmemFacadeTest {

    interface RankBody {
        String run(SymmemWorld world) throws Exception;
    }

    static List<String> twoRanks(RankBody body) throws Exception {
        return twoRanks(b -> b, body);
    }

    /** As {@link #twoRanks(RankBody)}, each rank's builder passed through {@code settings} first. */
    static List<String> twoRanks(java.util.function.UnaryOperator<Symmem.Builder> settings, RankBody body) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        // Each rank's thread has the same name, as the main threads of one program's processes do: what
        // pairs by order across ranks carries the calling thread's name, and ranks of one program agree on it.
        ExecutorService threads = Executors.newFixedThreadPool(2, r -> new Thread(r, "rank-main"));
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                results.add(threads.submit(() -> {
                    try (SymmemWorld world = settings.apply(Symmem.builder().rank(rank).worldSize(2).store("127.0.0.1", port)
                            .backend(Backend.HOST).rendezvousTimeout(Duration.ofSeconds(20))).join()) {
                        return body.run(world);
                    }
                }));
            }
            List<String> out = new ArrayList<>();
            AssertionError failed = null;
            for (int r = 0; r < results.size(); r++) {
                try {
                    out.add(results.get(r).get(90, TimeUnit.SECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    // Every rank's failure, not only the first: one rank's error often explains another's.
                    failed = failed == null ? new AssertionError("rank " + r + " failed", e.getCause()) : failed;
                    if (failed.getCause() != e.getCause()) {
                        failed.addSuppressed(new AssertionError("rank " + r + " failed", e.getCause()));
                    }
                }
            }
            if (failed != null) {
                throw failed;
            }
            return out;
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void collectivesOfTheWorldGroupAndOfASubgroup() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup all = world.group();
            StringBuilder seen = new StringBuilder();
            try (SymmetricBuffer b = all.allocate(DType.FLOAT32, 4)) {
                // allGather: rank r contributes block r (2 elements each).
                b.write(2L * world.rank(), new float[] {10 * world.rank() + 1, 10 * world.rank() + 2});
                all.allGather(b);
                float[] gathered = new float[4];
                b.read(gathered);
                seen.append(java.util.Arrays.toString(gathered));
                // reduceScatter: block r of rank r gets the sum of every rank's block r.
                b.write(new float[] {1 + world.rank(), 2, 3, 4 * (1 + world.rank())});
                all.reduceScatter(b, ReduceOp.SUM);
                float[] mine = new float[2];
                b.read(2L * world.rank(), mine);
                seen.append(' ').append(java.util.Arrays.toString(mine));
            }
            SymmemGroup pair = world.group("pair.0-1", 1, 0);  // group rank 0 is world rank 1
            seen.append(" pair-rank ").append(pair.rank());
            try (BufferPool pool = pair.pool()) {
                SymmetricBuffer b = pool.allocate(DType.FLOAT32, 3);
                b.write(new float[] {world.rank(), 5, -world.rank()});
                pair.allReduce(b, ReduceOp.MAX, Algorithm.ONE_SHOT);
                float[] max = new float[3];
                b.read(max);
                seen.append(' ').append(java.util.Arrays.toString(max));
                // Left open: closing the pool frees it.
            }
            pair.store().set("hello", ("from " + world.rank()).getBytes(StandardCharsets.UTF_8)).await().indefinitely();
            pair.barrier(Duration.ofSeconds(20));
            byte[] other = pair.store().get("hello", Duration.ofSeconds(5)).await().indefinitely();
            seen.append(" store ").append(other.length);
            return seen.toString();
        });
        assertThat(results.get(0)).isEqualTo("[1.0, 2.0, 11.0, 12.0] [3.0, 4.0] pair-rank 1 [1.0, 5.0, 0.0] store 6");
        assertThat(results.get(1)).isEqualTo("[1.0, 2.0, 11.0, 12.0] [6.0, 12.0] pair-rank 0 [1.0, 5.0, 0.0] store 6");
    }

    @Test
    void badGroupsAndBuffersAreRefusedNamingWhatIsWrong() throws Exception {
        List<String> results = twoRanks(world -> {
            assertThatThrownBy(() -> world.group("a/b", 0, 1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("group name 'a/b' is not allowed").hasMessageContaining("'/' at position 1");
            assertThatThrownBy(() -> world.group("world", 0, 1)).hasMessageContaining("taken by the group of every rank");
            assertThatThrownBy(() -> world.group("g", 0, 2)).hasMessageContaining("rank 2 is outside the world of 2 ranks");
            assertThatThrownBy(() -> world.group("g", 1, 1)).hasMessageContaining("rank 1 is listed twice");
            int other = 1 - world.rank();
            assertThatThrownBy(() -> world.group("g", other)).hasMessageContaining("does not include this rank ("
                    + world.rank() + ")");
            assertThatThrownBy(() -> world.group().allocate(DType.FLOAT32, 0)).hasMessageContaining("positive element count");
            try (SymmetricBuffer b = world.group().allocate(DType.BFLOAT16, 3)) {
                assertThatThrownBy(() -> b.write(new float[3])).hasMessageContaining("bf16 buffer").hasMessageContaining("short[]");
                assertThatThrownBy(() -> b.write(2, new short[2])).isInstanceOf(IndexOutOfBoundsException.class)
                        .hasMessageContaining("elements 2..4 are outside the buffer of 3 bf16 elements");
                assertThatThrownBy(() -> world.group().allGather(b)).hasMessageContaining("do not split into 2 equal blocks");
            }
            return "ok";
        });
        assertThat(results).containsExactly("ok", "ok");
    }

    @Test
    void membersThatDisagreeOnTheRanksFailSayingHow() throws Exception {
        List<String> results = twoRanks(world -> {
            int[] ranks = world.rank() == 0 ? new int[] {0, 1} : new int[] {1, 0};
            try {
                world.group("mixed", ranks);
                return "made";
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        });
        assertThat(results).allSatisfy(m -> assertThat(m).contains("the members of group 'mixed' disagree on its ranks"));
        assertThat(results.get(0)).contains("rank 0 made it of [0, 1]").contains("world rank 1 made it of [1, 0]");
    }

    @Test
    void builderSettingsAreCheckedNamingTheVariable() {
        assertThatThrownBy(() -> Symmem.builder().rank(3).worldSize(2).config())
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("RANK");
        assertThatThrownBy(() -> Symmem.builder().rank(0).worldSize(1).storeTimeout(Duration.ZERO).config())
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("SYMMEM_TIMEOUT_STORE");
        assertThat(Symmem.builder().rank(1).worldSize(2).store("127.0.0.1", 1234).config().masterPort()).isEqualTo(1234);
    }

    /** Rank r's input for element i of thread t's round k: small integers, exact in float32 sums. */
    private static float input(int rank, int thread, int round, int i) {
        return (i * 31 + rank * 7 + thread * 1000 + round * 3) % 977 - 488;
    }

    /** 300 in-place all-reduces of 4,099 elements, one-shot and two-shot alternating; null if all are right. */
    private static String allReduces(SymmemGroup group, SymmetricBuffer b, int rank, int thread) {
        float[] values = new float[4099];
        for (int round = 0; round < 300; round++) {
            for (int i = 0; i < values.length; i++) {
                values[i] = input(rank, thread, round, i);
            }
            b.write(values);
            group.allReduce(b, ReduceOp.SUM, round % 2 == 0 ? Algorithm.ONE_SHOT : Algorithm.TWO_SHOT);
            b.read(values);
            for (int i = 0; i < values.length; i++) {
                float expected = input(0, thread, round, i) + input(1, thread, round, i);
                if (values[i] != expected) {
                    return "thread " + thread + " round " + round + " [" + i + "]: " + values[i] + ", expected " + expected;
                }
            }
        }
        return null;
    }

    /** Runs body(t) on two threads, started in the opposite order on rank 1; the failures, joined. */
    private static String onTwoThreads(int rank, java.util.function.IntFunction<String> body) throws Exception {
        List<Thread> threads = new ArrayList<>();
        try {
            List<java.util.concurrent.FutureTask<String>> done = new ArrayList<>();
            for (int k = 0; k < 2; k++) {
                int t = rank == 0 ? k : 1 - k;
                java.util.concurrent.FutureTask<String> task = new java.util.concurrent.FutureTask<>(() -> body.apply(t));
                done.add(task);
                // Thread t has the same name on every rank, as the same thread of one program would.
                Thread thread = new Thread(task, "worker-" + t);
                threads.add(thread);
                thread.start();
            }
            StringBuilder wrong = new StringBuilder();
            for (java.util.concurrent.FutureTask<String> f : done) {
                String w = f.get(120, TimeUnit.SECONDS);
                if (w != null) {
                    wrong.append(w).append("; ");
                }
            }
            return wrong.toString();
        } finally {
            threads.forEach(Thread::interrupt);
        }
    }

    @Test
    void twoGroupsOfTheSameRanksRunAtOnceFromTwoThreads() throws Exception {
        List<String> wrong = twoRanks(world -> {
            SymmemGroup[] groups = {world.group("left", 0, 1), world.group("right", 0, 1)};
            SymmetricBuffer[] buffers = {groups[0].allocate(DType.FLOAT32, 4099), groups[1].allocate(DType.FLOAT32, 4099)};
            return onTwoThreads(world.rank(), t -> allReduces(groups[t], buffers[t], world.rank(), t));
        });
        assertThat(wrong).containsExactly("", "");
    }

    @Test
    void threadsAllocatingNamedBuffersAtOnceEachGetTheirOwn() throws Exception {
        // Rank 0 starts thread 0's allocation first, rank 1 thread 1's: buffers paired by order would
        // then cross (each thread's all-reduces would add the other thread's data: they did, before
        // named allocation); paired by name they cannot. The second thread waits only until the first
        // has started allocating on its own rank (waiting for the end would deadlock: each allocation
        // is collective).
        List<String> wrong = twoRanks(world -> {
            SymmemGroup group = world.group();
            java.util.concurrent.CountDownLatch firstStarted = new java.util.concurrent.CountDownLatch(1);
            int first = world.rank();
            return onTwoThreads(world.rank(), t -> {
                try {
                    if (t != first && !firstStarted.await(60, TimeUnit.SECONDS)) {
                        return "thread " + t + ": the first thread never started";
                    }
                } catch (InterruptedException e) {
                    return "interrupted";
                }
                if (t == first) {
                    firstStarted.countDown();
                }
                try (SymmetricBuffer b = group.allocate("thread-" + t, DType.FLOAT32, 4099)) {
                    return allReduces(group, b, world.rank(), t);
                }
            });
        });
        assertThat(wrong).containsExactly("", "");
    }

    @Test
    void theBlocksOfOnePoolBelongToTheFirstThreadThatRunsACollective() throws Exception {
        List<String> refusals = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (BufferPool pool = group.pool(); SymmetricBuffer a = pool.allocate(DType.FLOAT32, 64);
                    SymmetricBuffer b = pool.allocate(DType.FLOAT32, 64)) {
                group.allReduce(a, ReduceOp.SUM);
                ExecutorService other = Executors.newSingleThreadExecutor(r -> new Thread(r, "other-thread"));
                try {
                    return other.submit(() -> {
                        try {
                            group.allReduce(b, ReduceOp.SUM);
                            return "not refused";
                        } catch (IllegalStateException e) {
                            return e.getMessage();
                        }
                    }).get(60, TimeUnit.SECONDS);
                } finally {
                    other.shutdownNow();
                }
            }
        });
        assertThat(refusals).allSatisfy(m -> assertThat(m).contains("allReduce on group 'world' from thread 'other-thread'")
                .contains("belong to thread").contains("blocks of one pool share a signal pad"));
    }

    @Test
    void aSecondThreadOnOneBufferIsRefusedAtOnceNamingBothOperations() throws Exception {
        // Rank 1 joins rank 0's all-reduce only after rank 0's second thread was refused, so the
        // first is still inside its call when the second comes, whatever the timing.
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 16)) {
                b.write(new float[] {world.rank() + 1});
                if (world.rank() == 1) {
                    group.store().get("refused", Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(65));
                    group.allReduce(b, ReduceOp.SUM);
                    return "joined";
                }
                List<String> refused = java.util.Collections.synchronizedList(new ArrayList<>());
                onTwoThreads(0, t -> {
                    try {
                        group.allReduce(b, ReduceOp.SUM);
                    } catch (IllegalStateException e) {
                        refused.add(e.getMessage());
                        group.store().set("refused", new byte[] {1}).await().atMost(Duration.ofSeconds(10));
                    }
                    return null;
                });
                float[] sum = new float[1];
                b.read(sum);
                return refused + " sum " + sum[0];
            }
        });
        assertThat(seen.get(1)).isEqualTo("joined");
        assertThat(seen.get(0)).contains("allReduce on group 'world' refused: allReduce (thread '")
                .contains("is running on the fp32 buffer of 16 elements right now").endsWith(" sum 3.0");
    }
}
