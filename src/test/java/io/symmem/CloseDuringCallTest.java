package io.symmem;

import static io.symmem.SymmemFacadeTest.twoRanks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Closing a buffer while another thread is inside a call on it, and reading or writing it under a
 * collective, on two ranks (threads of this JVM, host backend): the close waits for the call or is
 * refused, never frees memory under it, and a refused close can be retried.
 */
class CloseDuringCallTest {

    /**
     * Polls (without entering the buffer, which could refuse the call itself) until {@code operation} is
     * inside {@code b}; then a read is refused, and its message is returned.
     */
    private static String awaitInside(SymmetricBuffer b, String operation) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!operation.equals(b.operationInside())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(operation + " never started on the buffer");
            }
            Thread.sleep(5);
        }
        try {
            b.read(new float[1]);
        } catch (IllegalStateException refused) {
            return refused.getMessage();
        }
        throw new AssertionError("a read while " + operation + " was inside the buffer was not refused");
    }

    @Test
    void closingABufferDuringAnAllReduceWaitsForItThenFreesIt() throws Exception {
        // The fourth row: one thread is inside an all-reduce (its peer is late) and another thread
        // of the same rank closes the buffer. Today the JVM dies (SIGSEGV in wait_epochs).
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group();
            SymmetricBuffer b = group.allocate(DType.FLOAT32, 1024);
            float[] mine = new float[1024];
            java.util.Arrays.fill(mine, world.rank() + 1);
            b.write(mine);
            if (world.rank() == 1) {
                group.store().get("closing", Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(65));
                Thread.sleep(300);  // the close on rank 0 is waiting by now
                group.allReduce(b, ReduceOp.SUM);
                float[] sum = new float[1024];
                b.read(sum);
                b.close();
                return "sum " + sum[0] + " at " + sum[1023];
            }
            CompletableFuture<String> reduced = CompletableFuture.supplyAsync(() -> {
                group.allReduce(b, ReduceOp.SUM);
                return "returned";
            });
            String readRefused = awaitInside(b, "allReduce");
            CompletableFuture<Long> closed = CompletableFuture.supplyAsync(() -> {
                b.close();
                return System.nanoTime();
            });
            group.store().set("closing", new byte[] {1}).await().atMost(Duration.ofSeconds(10));
            long closedAt = closed.get(60, TimeUnit.SECONDS);
            String call = reduced.get(60, TimeUnit.SECONDS);
            assertThat(closedAt).isPositive();
            assertThatThrownBy(() -> b.read(new float[1])).hasMessageContaining("is closed");
            return call + "; read under it: " + readRefused;
        });
        assertThat(seen.get(1)).isEqualTo("sum 3.0 at 3.0");
        assertThat(seen.get(0)).startsWith("returned; read under it: read on group 'world' refused: allReduce (thread '")
                .contains("is running on the fp32 buffer of 1024 elements right now");
    }

    @Test
    void aWriteUnderACollectiveIsRefusedAndTheCollectiveStillPairs() throws Exception {
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 8)) {
                b.write(new float[] {world.rank() + 1});
                if (world.rank() == 1) {
                    group.store().get("refused", Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(65));
                    group.allReduce(b, ReduceOp.SUM);
                } else {
                    CompletableFuture<Void> reduced = CompletableFuture.runAsync(() -> group.allReduce(b, ReduceOp.SUM));
                    awaitInside(b, "allReduce");
                    assertThatThrownBy(() -> b.write(new float[] {100})).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("write on group 'world' refused: allReduce");
                    group.store().set("refused", new byte[] {1}).await().atMost(Duration.ofSeconds(10));
                    reduced.get(60, TimeUnit.SECONDS);
                }
                float[] sum = new float[1];
                b.read(sum);
                return "sum " + sum[0];
            }
        });
        assertThat(seen).containsExactly("sum 3.0", "sum 3.0");
    }

    @Test
    void aCloseRefusedForAnOpenGraphLeavesTheBufferWhole() throws Exception {
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group();
            SymmetricBuffer b = group.allocate(DType.FLOAT32, 4);
            CapturedGraph graph = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM));
            assertThatThrownBy(b::close).isInstanceOf(CloseRefusedException.class)
                    .hasMessageContaining("1 captured graph(s)").hasMessageContaining("close them first");
            // Refused means untouched: the buffer still works, and the graph replays on it.
            b.write(new float[] {world.rank() + 1, 0, 0, 0});
            graph.replay();
            float[] sum = new float[4];
            b.read(sum);
            graph.close();
            b.close();
            assertThatThrownBy(() -> b.read(new float[1])).hasMessageContaining("is closed");
            return "sum " + sum[0];
        });
        assertThat(seen).containsExactly("sum 3.0", "sum 3.0");
    }

    @Test
    void aPoolBlockUnderAnOpenGraphIsNotFreedAndThePoolClosesWhenAskedAgain() throws Exception {
        // Before: the block went back to the pool under the graph (the next replay wrote into whatever
        // the pool handed out next), and a pool whose close stopped half-way was never freed.
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group("pair", 0, 1);
            BufferPool pool = group.pool();
            SymmetricBuffer block = pool.allocate(DType.FLOAT32, 4);
            CapturedGraph graph = group.capture(block, () -> group.allReduce(block, ReduceOp.SUM));
            assertThatThrownBy(block::close).isInstanceOf(CloseRefusedException.class);
            assertThatThrownBy(pool::close).isInstanceOf(CloseRefusedException.class);
            assertThatThrownBy(() -> pool.allocate(DType.FLOAT32, 4)).hasMessageContaining("closed");
            block.write(new float[] {world.rank() + 1, 0, 0, 0});
            graph.replay();
            float[] sum = new float[4];
            block.read(sum);
            graph.close();
            pool.close();
            assertThat(pool.figures().liveBlocks()).as("blocks left after the second close").isZero();
            assertThatThrownBy(() -> block.read(new float[1])).hasMessageContaining("is closed");
            return "sum " + sum[0];
        });
        assertThat(seen).containsExactly("sum 3.0", "sum 3.0");
    }

    @Test
    void closingAGroupClosesItsGraphsBeforeTheBuffersUnderThem() throws Exception {
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group("pair", 0, 1);
            SymmetricBuffer b = group.allocate(DType.FLOAT32, 4);
            CapturedGraph graph = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM));
            group.close();
            assertThatThrownBy(graph::replay).hasMessageContaining("is closed");
            assertThatThrownBy(() -> b.read(new float[1])).hasMessageContaining("is closed");
            return "ok";
        });
        assertThat(seen).containsExactly("ok", "ok");
    }

    @Test
    void closingAGraphDuringItsReplayWaitsForTheReplay() throws Exception {
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 4)) {
                CapturedGraph graph = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM));
                b.write(new float[] {world.rank() + 1, 0, 0, 0});
                if (world.rank() == 1) {
                    group.store().get("closing-graph", Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(65));
                    Thread.sleep(300);  // rank 0's close is waiting by now
                    graph.replay();
                    graph.close();
                } else {
                    CompletableFuture<Void> replayed = CompletableFuture.runAsync(graph::replay);
                    awaitInside(b, "allReduce");  // the replay's all-reduce, waiting for rank 1
                    CompletableFuture<Void> closed = CompletableFuture.runAsync(graph::close);
                    group.store().set("closing-graph", new byte[] {1}).await().atMost(Duration.ofSeconds(10));
                    closed.get(60, TimeUnit.SECONDS);
                    replayed.get(60, TimeUnit.SECONDS);
                    assertThatThrownBy(graph::replay).hasMessageContaining("closed");
                }
                float[] sum = new float[4];
                b.read(sum);
                return "sum " + sum[0];
            }
        });
        assertThat(seen).containsExactly("sum 3.0", "sum 3.0");
    }
}
