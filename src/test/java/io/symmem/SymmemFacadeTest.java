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

    private interface RankBody {
        String run(SymmemWorld world) throws Exception;
    }

    private static List<String> twoRanks(RankBody body) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                results.add(threads.submit(() -> {
                    try (SymmemWorld world = Symmem.builder().rank(rank).worldSize(2).store("127.0.0.1", port)
                            .backend(Backend.HOST).rendezvousTimeout(Duration.ofSeconds(20)).join()) {
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
}
