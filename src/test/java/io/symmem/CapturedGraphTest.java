package io.symmem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeStream;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * group.capture / CapturedGraph with two ranks as threads of this JVM, on the host backend: it honours
 * the API by running the captured code at each replay. The CUDA-graph path is exercised on GPUs by
 * scripts/gpu/run-graphs.sh (test_cuda_graphs natively, `symmem demo --graph` from Java).
 */
class CapturedGraphTest {

    private static float[] input(int rank, int replay, int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (i * 7 + rank * 31 + replay * 3) % 17 - 8;
        }
        return x;
    }

    @Test
    void aCapturedAllReduceRunsOnNewInputAtEveryReplay() throws Exception {
        int n = 1000;
        List<String> results = SymmemFacadeTest.twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, n);
                 CapturedGraph oneShot = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT));
                 CapturedGraph twoShot = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM, Algorithm.TWO_SHOT))) {
                assertThat(oneShot.isDevice()).isFalse();
                float[] got = new float[n];
                for (int replay = 0; replay < 100; replay++) {
                    b.write(input(world.rank(), replay, n));
                    (replay % 2 == 0 ? oneShot : twoShot).replay();
                    b.read(got);
                    for (int i = 0; i < n; i++) {
                        float expected = input(0, replay, n)[i] + input(1, replay, n)[i];
                        assertThat(got[i]).as("replay %d, element %d", replay, i).isEqualTo(expected);
                    }
                    if (replay % 10 == 9) {  // eager calls between replays keep working
                        group.allReduce(b, ReduceOp.MAX, Algorithm.ONE_SHOT);
                    }
                }
                b.write(input(world.rank(), 0, n));
                oneShot.replay(2);  // twice in place: the sum of the sums
                b.read(got);
                assertThat(got[5]).isEqualTo(2 * (input(0, 0, n)[5] + input(1, 0, n)[5]));
            }
            return "ok";
        });
        assertThat(results).containsExactly("ok", "ok");
    }

    @Test
    void badUseOfAGraphIsRefusedNamingWhatIsWrong() throws Exception {
        List<String> results = SymmemFacadeTest.twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 8);
                 SymmetricBuffer other = group.allocate(DType.FLOAT32, 8)) {
                try (CapturedGraph copies = group.capture(b, () -> b.write(new float[8]))) {
                    assertThatThrownBy(copies::replay).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("inside a graph").hasMessageContaining("write the input before each replay");
                }
                try (CapturedGraph foreign = group.capture(b, () -> group.allReduce(other, ReduceOp.SUM))) {
                    assertThatThrownBy(foreign::replay).isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("allReduce on group 'world' inside a graph of")
                            .hasMessageContaining("a graph records the calls of one buffer");
                }
                try (CapturedGraph allocating = group.capture(b, () -> group.allocate(DType.FLOAT32, 8))) {
                    assertThatThrownBy(allocating::replay).hasMessageContaining("allocate on group 'world' inside a graph")
                            .hasMessageContaining("only collectives on the graph's buffer are captured");
                }
                try (CapturedGraph nested = group.capture(b, () -> group.capture(b, () -> { }))) {
                    assertThatThrownBy(nested::replay).hasMessageContaining("graphs do not nest");
                }
                CapturedGraph g = group.capture(b, () -> group.allReduce(b, ReduceOp.SUM));
                assertThatThrownBy(() -> g.replay(0)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("times must be at least 1");
                g.close();
                assertThatThrownBy(g::replay).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
                assertThatThrownBy(() -> group.capture(b, null)).hasMessageContaining("body must not be null");
                SymmemGroup pair = world.group("pair", 0, 1);
                assertThatThrownBy(() -> pair.capture(b, () -> { })).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("the buffer belongs to group 'world'");
                // The lower layer has no host graphs, and says so.
                SymmetricMemory memory = b.memory();
                try (NativeStream stream = memory.createStream()) {
                    assertThatThrownBy(() -> memory.captureGraph(stream, () -> { }))
                            .isInstanceOf(NativeException.Unsupported.class).hasMessageContaining("has no CUDA graphs");
                }
                // The buffer is still usable after every refusal.
                b.write(new float[] {1, 2, 3, 4, 5, 6, 7, 8});
                group.allReduce(b, ReduceOp.SUM);
                float[] got = new float[8];
                b.read(got);
                return Arrays.toString(got);
            }
        });
        assertThat(results).containsOnly("[2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]");
    }
}
