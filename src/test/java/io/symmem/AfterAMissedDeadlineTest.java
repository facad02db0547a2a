package io.symmem;

import static io.symmem.SymmemFacadeTest.twoRanks;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A library user's program after a collective missed its deadline (two ranks, host backend,
 * SYMMEM_TIMEOUT_COLLECTIVE=300ms, every element checked): every later call on that buffer is right or
 * refused, on every rank, and never silently wrong; a new buffer (or pool) is right again.
 */
class AfterAMissedDeadlineTest {
    private static final UnaryOperator<Symmem.Builder> SHORT_DEADLINE = b -> b.collectiveTimeout(Duration.ofMillis(300));
    private static final int COUNT = 2048;

    /** Writes call {@code call}'s input, all-reduces, checks: "ok", "refused", or throws on a wrong element. */
    private static String checkedAllReduce(SymmemGroup group, SymmetricBuffer b, int rank, int call) {
        float[] mine = new float[COUNT];
        for (int i = 0; i < COUNT; i++) {
            mine[i] = (rank + 1) * (i % 5 + 1) + call;
        }
        b.write(mine);
        try {
            group.allReduce(b, ReduceOp.SUM);
        } catch (RuntimeException refused) {
            return "refused: " + refused.getMessage();
        }
        float[] sum = new float[COUNT];
        b.read(sum);
        for (int i = 0; i < COUNT; i++) {
            float want = 3 * (i % 5 + 1) + 2 * call;
            if (sum[i] != want) {
                throw new AssertionError("rank " + rank + " call " + call + " element " + i + ": " + sum[i] + " where " + want
                        + " is right, and the call reported success");
            }
        }
        return "ok";
    }

    /** The first row: rank 1 is 1.5 s late at one all-reduce, then both run 50 checked ones, a few ms apart. */
    private static String lateOnceThenFifty(SymmemGroup group, SymmetricBuffer b, int rank) throws InterruptedException {
        if (rank == 1) {
            Thread.sleep(1500);
        }
        String first = checkedAllReduce(group, b, rank, 0);
        int ok = 0;
        String lastRefusal = null;
        for (int call = 1; call <= 50; call++) {
            Thread.sleep(rank == 0 ? 1 : 3);
            String outcome = checkedAllReduce(group, b, rank, call);
            if (outcome.equals("ok")) {
                ok++;
            } else {
                lastRefusal = outcome;
            }
        }
        return "first " + (first.equals("ok") ? "ok" : "refused") + ", later ok " + ok + ", last refusal: " + lastRefusal;
    }

    @Test
    void afterOneRankMissedTheDeadlineEveryLaterCallIsRefusedOnEveryRankNeverWrong() throws Exception {
        List<String> seen = twoRanks(SHORT_DEADLINE, world -> {
            SymmemGroup group = world.group();
            String outcome;
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, COUNT)) {
                group.barrier(Duration.ofSeconds(10));
                outcome = lateOnceThenFifty(group, b, world.rank());
            }
            // What the refusal says to do: a new buffer, and it is right.
            group.barrier(Duration.ofSeconds(10));
            try (SymmetricBuffer fresh = group.allocate(DType.FLOAT32, COUNT)) {
                for (int call = 0; call < 5; call++) {
                    group.barrier(Duration.ofSeconds(10));  // both have read the last result before new input
                    assertThat(checkedAllReduce(group, fresh, world.rank(), call)).isEqualTo("ok");
                }
            }
            return outcome;
        });
        for (String rank : seen) {
            assertThat(rank).startsWith("first refused, later ok 0, last refusal: ").contains("out of step")
                    .contains("free it");
        }
    }

    @Test
    void aPoolBlockThatMissedTheDeadlineTakesItsSegmentOutOfStepAndANewPoolIsRight() throws Exception {
        List<String> seen = twoRanks(SHORT_DEADLINE, world -> {
            SymmemGroup group = world.group();
            String outcome;
            String sibling;
            try (BufferPool pool = group.pool(); SymmetricBuffer a = pool.allocate(DType.FLOAT32, COUNT);
                    SymmetricBuffer b = pool.allocate(DType.FLOAT32, COUNT)) {
                group.barrier(Duration.ofSeconds(10));
                outcome = lateOnceThenFifty(group, a, world.rank());
                // The blocks of one segment share its signal pad: the other block is refused too.
                sibling = checkedAllReduce(group, b, world.rank(), 99);
            }
            group.barrier(Duration.ofSeconds(10));
            try (BufferPool pool = group.pool(); SymmetricBuffer fresh = pool.allocate(DType.FLOAT32, COUNT)) {
                assertThat(checkedAllReduce(group, fresh, world.rank(), 7)).isEqualTo("ok");
            }
            return outcome + "; sibling " + (sibling.equals("ok") ? "ok" : "refused");
        });
        for (String rank : seen) {
            assertThat(rank).startsWith("first refused, later ok 0").endsWith("; sibling refused");
        }
    }

    @Test
    void aGroupBarrierOneRankGaveUpNeverPairsWithALaterRoundAndANewGroupWorks() throws Exception {
        // The store rounds under the façade (group barrier, allocation): rank 0 gives a barrier up alone;
        // before, rank 1's next barrier paired with it and every later round was one off.
        List<String> seen = twoRanks(world -> {
            SymmemGroup group = world.group("pair", 0, 1);
            if (world.rank() == 0) {
                try {
                    group.barrier(Duration.ofMillis(300));
                    return "rank 0's lone barrier passed";
                } catch (RuntimeException timedOut) {
                    world.group().store().set("gave-up", new byte[] {1}).await().atMost(Duration.ofSeconds(10));
                }
            } else {
                world.group().store().get("gave-up", Duration.ofSeconds(30)).await().atMost(Duration.ofSeconds(35));
            }
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < 3; i++) {
                try {
                    group.barrier(Duration.ofSeconds(5));
                    out.append("passed;");
                } catch (io.symmem.store.ExchangeOutOfStepException refused) {
                    out.append("refused since round ").append(refused.sinceRound()).append(';');
                }
            }
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 4)) {
                out.append("allocated");
            } catch (io.symmem.store.ExchangeOutOfStepException refused) {
                out.append("allocation refused: ").append(refused.getMessage().contains("gave up round 0") ? "names the cause" : refused.getMessage());
            }
            SymmemGroup fresh = world.group("pair-2", 0, 1);
            fresh.barrier(Duration.ofSeconds(10));
            return out + "; new group passed";
        });
        assertThat(seen).containsOnly("refused since round 0;refused since round 0;refused since round 0;"
                + "allocation refused: names the cause; new group passed");
    }
}
