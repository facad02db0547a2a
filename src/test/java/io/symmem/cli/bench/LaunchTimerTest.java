package io.symmem.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.symmem.cli.common.HalfFloats;
import io.symmem.collective.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * LaunchTimer's method on a fake device and a fake clock (no GPU, no wall time): a launch advances the clock by what
 * it would cost, and a second rank's values are scripted.
 */
class LaunchTimerTest {
    /** The calls the first {@code slowLaunches} launches cost {@code slowNs} (interpreted code), then {@code fastNs}. */
    private static final class FakeDevice {
        final long slowLaunches;
        final long slowNs;
        final long fastNs;
        final long drainNs;
        long clock;
        long launches;
        int synchronizes;

        FakeDevice(long slowLaunches, long slowNs, long fastNs, long drainNs) {
            this.slowLaunches = slowLaunches;
            this.slowNs = slowNs;
            this.fastNs = fastNs;
            this.drainNs = drainNs;
        }

        void launch() {
            launches++;
            clock += launches <= slowLaunches ? slowNs : fastNs;
        }

        void synchronize() {
            synchronizes++;
            clock += drainNs;
        }
    }

    /** Rank 0 is this process; rank 1's values come from a script, one entry per agreement. */
    private static final class TwoRanks implements LaunchTimer.Ranks {
        final Deque<double[]> otherRank;
        final List<double[]> mine = new ArrayList<>();
        int lineUps;

        TwoRanks(double[]... otherRank) {
            this.otherRank = new ArrayDeque<>(List.of(otherRank));
        }

        @Override
        public void lineUp() {
            lineUps++;
        }

        @Override
        public double[] maxOverRanks(double... values) {
            mine.add(values.clone());
            double[] theirs = otherRank.removeFirst();
            double[] max = values.clone();
            for (int i = 0; i < max.length; i++) {
                max[i] = Math.max(max[i], theirs[i]);
            }
            return max;
        }

        @Override
        public LaunchTimer.Agreement agree(double... values) {
            int slowest = otherRank.getFirst()[0] > values[0] ? 1 : 0;
            return new LaunchTimer.Agreement(maxOverRanks(values), slowest);
        }
    }

    @Test
    void theSlowestRanksProbeSizesTheRoundsAndTheFastestRoundIsKept() {
        // 10 warm-up + 10 probe launches at 20 us; the first round starts interpreted (20 us) and ends compiled (7 us).
        FakeDevice device = new FakeDevice(1000, 20_000, 7_000, 3_000);
        TwoRanks ranks = new TwoRanks(new double[] {25.0}, new double[] {9.0, 9.0}, new double[] {7.5, 6.0});
        LaunchTimer.Plan plan = new LaunchTimer.Plan(10, 0, 0, 100, 20_000, 2);

        LaunchTimer.Timing t = LaunchTimer.measure(plan, device::launch, device::synchronize, ranks, () -> device.clock);

        assertThat(ranks.mine.get(0)[0]).as("this rank's probe: 10 launches at 20 us + a 3 us drain").isCloseTo(20.3, within(1e-9));
        assertThat(t.launches()).as("100 ms by rank 1's slower 25 us probe").isEqualTo(4000);
        assertThat(device.launches).isEqualTo(10 + 10 + 2 * 4000);
        assertThat(ranks.lineUps).as("every round starts lined up").isEqualTo(2);
        assertThat(ranks.mine.get(1)[0]).as("round 1 on this rank: 980 launches at 20 us, 3020 at 7, the drain")
                .isCloseTo((980 * 20.0 + 3020 * 7.0 + 3.0) / 4000, within(1e-9));
        assertThat(t.micros()).as("round 2 is faster; rank 1 was the slower rank in it").isEqualTo(7.5);
        assertThat(t.slowestRank()).as("the kept round's slowest rank").isEqualTo(1);
        assertThat(t.hostMicros()).as("host time of round 2, this rank's (before the drain)").isCloseTo(7.0, within(1e-9));
    }

    @Test
    void theJitWarmUpFillsItsTimeUntimedEvenWithAFixedLaunchCount() {
        FakeDevice device = new FakeDevice(0, 0, 25_000, 0);
        TwoRanks ranks = new TwoRanks(new double[] {25.0}, new double[] {25.0, 25.0});
        LaunchTimer.Plan plan = new LaunchTimer.Plan(10, 20, 50, 100, 20_000, 1);

        LaunchTimer.Timing t = LaunchTimer.measure(plan, device::launch, device::synchronize, ranks, () -> device.clock);

        assertThat(t.launches()).as("the fixed count").isEqualTo(50);
        assertThat(device.launches).as("10 warm-up, 10 probe, 20 ms / 25 us = 800 for the JIT, 50 timed")
                .isEqualTo(10 + 10 + 800 + 50);
        assertThat(t.micros()).isEqualTo(25.0);
    }

    @Test
    void aFixedCountWithoutJitWarmUpNeedsNoProbe() {
        FakeDevice device = new FakeDevice(0, 0, 5_000, 0);
        TwoRanks ranks = new TwoRanks(new double[] {5.0, 5.0});
        LaunchTimer.Timing t = LaunchTimer.measure(new LaunchTimer.Plan(3, 0, 40, 100, 20_000, 1), device::launch,
                device::synchronize, ranks, () -> device.clock);

        assertThat(device.launches).isEqualTo(3 + 40);
        assertThat(ranks.mine).as("one agreement: the round's").hasSize(1);
        assertThat(t.micros()).isEqualTo(5.0);
    }

    @Test
    void batchesAreHandedWholeToTheLoopThatMakesThem() {
        // A native loop: one call makes a whole batch; each launch in it costs 4 us, the call itself nothing more.
        FakeDevice device = new FakeDevice(0, 0, 4_000, 0);
        List<Long> batches = new ArrayList<>();
        TwoRanks ranks = new TwoRanks(new double[] {4.0}, new double[] {4.0, 4.0}, new double[] {4.0, 4.0});
        LaunchTimer.Plan plan = new LaunchTimer.Plan(10, 2, 0, 100, 20_000, 2);

        LaunchTimer.Timing t = LaunchTimer.measureAlternately(plan, List.of(n -> {
            batches.add(n);
            for (long i = 0; i < n; i++) {
                device.launch();
            }
        }), device::synchronize, ranks, () -> device.clock).get(0);

        assertThat(batches).as("warm-up, probe, 2 ms / 4 us for the JIT, then 100 ms / 4 us per round, one call each")
                .containsExactly(10L, 10L, 500L, 20_000L, 20_000L);
        assertThat(t.launches()).isEqualTo(20_000);
        assertThat(t.micros()).isEqualTo(4.0);
    }

    @Test
    void waysMeasuredTogetherAlternateTheirRoundsAndLaunchEquallyOften() {
        // Way "java" costs 5 us a launch, way "c" 3 us; the clock is shared, so each round sees only its own way.
        long[] clock = {0};
        List<String> calls = new ArrayList<>();
        java.util.function.LongConsumer java = n -> {
            calls.add("java " + n);
            clock[0] += n * 5_000;
        };
        java.util.function.LongConsumer c = n -> {
            calls.add("c " + n);
            clock[0] += n * 3_000;
        };
        TwoRanks ranks = new TwoRanks(new double[] {5.0}, new double[] {5.0, 5.0}, new double[] {3.0, 3.0},
                new double[] {4.0, 4.0}, new double[] {2.5, 2.5});
        LaunchTimer.Plan plan = new LaunchTimer.Plan(10, 1, 0, 10, 20_000, 2);

        List<LaunchTimer.Timing> t = LaunchTimer.measureAlternately(plan, List.of(java, c), () -> { }, ranks, () -> clock[0]);

        assertThat(calls).as("both warmed up, the first way's probe sizes every round (10 ms / 5 us), rounds alternate")
                .containsExactly("java 10", "c 10", "java 10", "java 200", "c 200", "java 2000", "c 2000", "java 2000",
                        "c 2000");
        assertThat(ranks.lineUps).isEqualTo(4);
        assertThat(t).hasSize(2);
        assertThat(t.get(0).micros()).as("java: 5 us a launch in both rounds, rank 1 no slower").isEqualTo(5.0);
        assertThat(t.get(1).micros()).as("c: its own 3 us, rank 1 no slower").isEqualTo(3.0);
        assertThat(t.get(0).launches()).isEqualTo(t.get(1).launches()).isEqualTo(2000);
    }

    @Test
    void aPlanThatCannotMeasureIsRefusedNamingItsValues() {
        assertThatThrownBy(() -> new LaunchTimer.Plan(10, 20, 0, 100, 20_000, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rounds 0 >= 1");
        assertThatThrownBy(() -> new LaunchTimer.Plan(10, -1, 0, 100, 20_000, 2)).hasMessageContaining("and -1 ms must be >= 0");
    }

    @Test
    void theMethodIsDescribedAsMeasured() {
        assertThat(new LaunchTimer.Plan(10, 20, 0, 100, 20_000, 2).describe())
                .isEqualTo("warm-up 10 launches + as many as fill 20 ms (JIT); per round: host barrier, System.nanoTime around"
                        + " N launches (N fills 100 ms by a 10-launch probe on the slowest rank, 10..20000) back-to-back on"
                        + " one stream + synchronize, / N, slowest rank; best of 2 rounds; host = the same clock before the"
                        + " synchronize, / N (what a call costs the caller)");
    }

    /** What fillRandom writes, gathered from its copies (at their offsets) into one little-endian buffer. */
    private static ByteBuffer filled(long bytes, DType dtype, int rank) {
        ByteBuffer all = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
        LaunchTimer.fillRandom(bytes, dtype, rank, (src, offset) -> all.put((int) offset, src, src.position(), src.remaining()));
        return all;
    }

    @Test
    void theInputsAreTheRanksSeededValuesInTheDevicesByteOrderNeverZeros() {
        ByteBuffer bf16 = filled(4096, DType.BFLOAT16, 1);
        SplittableRandom expected = new SplittableRandom(18);
        int zeros = 0;
        for (int i = 0; i < 2048; i++) {
            float f = (float) (expected.nextDouble() * 2 - 1);
            short bits = (short) ((bf16.get(2 * i) & 0xff) | (bf16.get(2 * i + 1) & 0xff) << 8);  // little-endian
            assertThat(bits).as("bf16 element %d", i).isEqualTo(HalfFloats.toBf16(f));
            zeros += bits == 0 ? 1 : 0;
        }
        assertThat(zeros).isLessThan(4);
        ByteBuffer fp32 = filled(4096, DType.FLOAT32, 1);
        SplittableRandom again = new SplittableRandom(18);
        for (int i = 0; i < 1024; i++) {
            assertThat(fp32.getFloat(4 * i)).as("fp32 element %d", i).isEqualTo((float) (again.nextDouble() * 2 - 1));
        }
        assertThat(filled(4096, DType.BFLOAT16, 0)).isNotEqualTo(bf16);
    }

    @Test
    void largeFillsGoInPiecesAtTheirOffsetsWithTheSequenceUnbroken() {
        long bytes = (40L << 20) + 6;  // three pieces of at most 16 MiB, and 3 bytes of no whole fp32 element (not written)
        List<long[]> copies = new ArrayList<>();
        ByteBuffer last = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        LaunchTimer.fillRandom(bytes, DType.FLOAT32, 0, (src, offset) -> {
            copies.add(new long[] {offset, src.remaining()});
            last.clear().put(0, src, src.limit() - 4, 4);
        });
        assertThat(copies).extracting(c -> c[0]).containsExactly(0L, 16L << 20, 32L << 20);
        assertThat(copies).extracting(c -> c[1]).containsExactly(16L << 20, 16L << 20, (8L << 20) + 4);
        SplittableRandom expected = new SplittableRandom(17);
        float lastValue = 0;
        for (long i = 0; i < bytes / 4; i++) {
            lastValue = (float) (expected.nextDouble() * 2 - 1);
        }
        assertThat(last.getFloat(0)).isEqualTo(lastValue);
    }
}
