package io.symmem.stress;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.cli.common.HalfFloats;
import io.symmem.stress.StressPlan.GroupSpec;
import io.symmem.stress.StressPlan.Kind;
import io.symmem.stress.StressPlan.LaneSpec;
import io.symmem.stress.StressPlan.Step;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class StressPlanTest {
    @Test
    void everyRankDerivesTheSamePlanFromTheSeed() {
        StressPlan a = StressPlan.of(42, 4, 6, 2, 10_000);
        StressPlan b = StressPlan.of(42, 4, 6, 2, 10_000);
        assertThat(a.lanes()).isEqualTo(b.lanes());
        assertThat(StressPlan.of(43, 4, 6, 2, 10_000).lanes()).isNotEqualTo(a.lanes());
        assertThat(a.totalCollectives()).isEqualTo(10_002);
    }

    @Test
    void groupsOverlapAtWorld4AndAreTwinsAtWorld2() {
        assertThat(ranks(StressPlan.of(1, 4, 3, 1, 3).groups()))
                .containsExactly("[0, 1, 2, 3]", "[0, 1]", "[1, 2, 3]");
        assertThat(ranks(StressPlan.of(1, 2, 3, 1, 3).groups())).containsExactly("[0, 1]", "[0, 1]");
    }

    @Test
    void theRestOfAGroupIsEveryOtherRankAndAGroupOfEveryRankHasNone() {
        StressPlan plan = StressPlan.of(1, 4, 3, 1, 3);
        assertThat(plan.restOf(0, 4)).isEmpty();
        assertThat(plan.restOf(1, 4).orElseThrow().name()).isEqualTo("stress-low-rest");
        assertThat(Arrays.toString(plan.restOf(1, 4).orElseThrow().ranks())).isEqualTo("[2, 3]");
        assertThat(Arrays.toString(plan.restOf(2, 4).orElseThrow().ranks())).isEqualTo("[0]");
        StressPlan twins = StressPlan.of(1, 2, 3, 1, 3);
        assertThat(twins.restOf(0, 2)).isEmpty();
        assertThat(twins.restOf(1, 2)).isEmpty();
    }

    @Test
    void blocksOnlyOnBuffersTheirGroupDividesAndShufflesOnlyWhereTheCountsFit() {
        StressPlan plan = StressPlan.of(7, 4, 6, 3, 30_000);
        boolean[] seen = new boolean[Kind.values().length];
        for (LaneSpec lane : plan.lanes()) {
            int size = plan.groups().get(lane.group()).ranks().length;
            for (Step step : lane.steps()) {
                seen[step.kind().ordinal()] = true;
                StressPlan.BufferSpec buffer = lane.buffers().get(step.buffer());
                boolean blocks = step.kind() == Kind.ALL_GATHER || step.kind() == Kind.REDUCE_SCATTER
                        || step.kind() == Kind.ALL_TO_ALL;
                if (blocks && buffer.count() % size != 0) {
                    throw new AssertionError("lane " + lane.id() + ": " + step + " on a buffer of " + buffer.count()
                            + " elements in a group of " + size);
                }
                if (step.kind() == Kind.ALL_TO_ALL_V && StressPlan.allToAllVCapacity(buffer, size) < size) {
                    throw new AssertionError("lane " + lane.id() + ": " + step + " on a buffer of " + buffer.count() + " "
                            + buffer.dtype() + " elements, too small for the counts of " + size + " ranks");
                }
            }
        }
        assertThat(seen).containsOnly(true);
        // A buffer of 12 fp16 elements has no room for the counts of 4 ranks (8 x 13 bytes): never shuffled.
        assertThat(StressPlan.kindOf(9, new StressPlan.BufferSpec(io.symmem.collective.DType.FLOAT16, 12), 4))
                .isEqualTo(Kind.ALL_REDUCE);
        assertThat(StressPlan.kindOf(9, new StressPlan.BufferSpec(io.symmem.collective.DType.FLOAT32, 1000), 4))
                .isEqualTo(Kind.ALL_TO_ALL_V);
    }

    @Test
    void inputsAreEighthsThatEveryDtypeHoldsExactly() {
        for (int i = 0; i < 2_000; i++) {
            float v = StressPlan.input(42, i % 6, i % 97, i % 4, i);
            boolean eighth = v * 8 == Math.rint(v * 8) && Math.abs(v) <= 8;
            boolean exact = HalfFloats.fromBf16(HalfFloats.toBf16(v)) == v && HalfFloats.fromFp16(HalfFloats.toFp16(v)) == v;
            if (!eighth || !exact) {
                throw new AssertionError("input " + i + " is " + v + ": not an eighth in [-8, 8] held exactly by bf16 and fp16");
            }
        }
    }

    private static List<String> ranks(List<GroupSpec> groups) {
        return groups.stream().map(g -> Arrays.toString(g.ranks())).toList();
    }
}
