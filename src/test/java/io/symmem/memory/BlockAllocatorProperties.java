package io.symmem.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The pool's sub-allocator under random sequences of allocations, frees (with and without streams
 * still using the block) and streams passing their markers: after every step the ranges tile the
 * segments with no overlap and nothing lost, a block that streams still used is never handed out
 * before they passed, and equal sequences give equal offsets however far the streams have got.
 */
class BlockAllocatorProperties {
    private static final long ALIGN = 4096;
    private static final long SEGMENT = 64 * 1024;
    private static final Duration T = Duration.ofSeconds(1);

    sealed interface Op permits Alloc, Free, Pass {
    }

    record Alloc(long bytes) implements Op {
    }

    /** Frees live block number pick % live, used by `streams` streams (0: none). */
    record Free(int pick, int streams) implements Op {
    }

    /** The stream of marker number pick % markers passes it. */
    record Pass(int pick) implements Op {
    }

    /** A stream marker the test passes by hand; await() stands for waiting on the stream. */
    static final class FakeMarker implements StreamMarker {
        boolean passed;
        boolean closed;

        @Override
        public boolean passed() {
            return passed;
        }

        @Override
        public void await(Duration timeout) {
            passed = true;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** What a run handed out, in order, for comparing runs. */
    private record Run(List<PoolBlock> handedOut, int segments) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> alloc = Arbitraries.longs().between(1, 3 * SEGMENT / 2).map(Alloc::new);
        Arbitrary<Op> small = Arbitraries.longs().between(1, 3 * ALIGN).map(Alloc::new);
        Arbitrary<Op> free = Arbitraries.integers().between(0, 1000)
                .flatMap(p -> Arbitraries.integers().between(0, 2).map(s -> new Free(p, s)));
        Arbitrary<Op> pass = Arbitraries.integers().between(0, 1000).map(Pass::new);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, alloc), net.jqwik.api.Tuple.of(4, small),
                net.jqwik.api.Tuple.of(6, free), net.jqwik.api.Tuple.of(2, pass))
                .list().ofMinSize(1).ofMaxSize(200);
    }

    @Property(tries = 400)
    void invariantsHoldAfterEveryStepAndEverythingComesBack(@ForAll("ops") List<Op> ops, @ForAll boolean noSplit) {
        run(ops, noSplit, false, true);
    }

    @Property(tries = 200)
    void offsetsDependOnTheSequenceOnlyNotOnWhenStreamsPass(@ForAll("ops") List<Op> ops, @ForAll boolean noSplit) {
        // One run passes markers as the sequence says; the other never lets a stream pass by itself.
        Run eager = run(ops, noSplit, false, false);
        Run lazy = run(ops, noSplit, true, false);
        assertThat(lazy).isEqualTo(eager);
    }

    @Example
    void freedNeighboursCoalesceIntoOneRange() {
        BlockAllocator a = new BlockAllocator(ALIGN, false);
        a.addSegment(SEGMENT);
        PoolBlock x = a.allocate(100);
        PoolBlock y = a.allocate(ALIGN + 1);
        PoolBlock z = a.allocate(ALIGN);
        assertThat(x).isEqualTo(new PoolBlock(0, 0, ALIGN));
        assertThat(y).isEqualTo(new PoolBlock(0, ALIGN, 2 * ALIGN));
        a.free(x, List.of());
        a.free(z, List.of());
        assertThat(a.freeRanges()).isEqualTo(2);  // x's, and z's joined with the tail
        a.free(y, List.of());
        assertThat(a.freeRanges()).isEqualTo(1);
        assertThat(a.largestFreeBytes()).isEqualTo(SEGMENT);
        assertThat(a.fragmentation()).isZero();
        a.checkInvariants();
    }

    @Example
    void aHeldBlockIsNotReusedUntilReclaimWaitedForItsStream() {
        BlockAllocator a = new BlockAllocator(ALIGN, true);
        a.addSegment(ALIGN);
        PoolBlock x = a.allocate(ALIGN);
        FakeMarker m = new FakeMarker();
        a.free(x, List.of(m));
        m.passed = true;  // passing alone does not return it: that would depend on timing
        assertThat(a.allocate(ALIGN)).isNull();
        a.reclaimHeld(T);
        assertThat(m.closed).isTrue();
        assertThat(a.allocate(ALIGN)).isEqualTo(x);
    }

    @Example
    void fragmentationIsOneMinusLargestFreeOverFree() {
        BlockAllocator a = new BlockAllocator(ALIGN, false);
        a.addSegment(4 * ALIGN);
        PoolBlock[] b = new PoolBlock[4];
        for (int i = 0; i < 4; i++) {
            b[i] = a.allocate(ALIGN);
        }
        a.free(b[0], List.of());
        a.free(b[2], List.of());
        assertThat(a.freeBytes()).isEqualTo(2 * ALIGN);
        assertThat(a.fragmentation()).isEqualTo(0.5);
    }

    private Run run(List<Op> ops, boolean noSplit, boolean ignorePasses, boolean checkEachStep) {
        BlockAllocator a = new BlockAllocator(ALIGN, noSplit);
        List<PoolBlock> live = new ArrayList<>();
        List<PoolBlock> handedOut = new ArrayList<>();
        List<FakeMarker> markers = new ArrayList<>();
        // Blocks freed with markers, and those markers: a reused range must find them all passed.
        List<PoolBlock> heldBlocks = new ArrayList<>();
        List<List<FakeMarker>> heldMarkers = new ArrayList<>();
        for (Op op : ops) {
            if (op instanceof Alloc al) {
                PoolBlock b = allocateLikeThePool(a, al.bytes());
                assertThat(b.size()).isGreaterThanOrEqualTo(al.bytes());
                assertThat(b.offset() % ALIGN).isZero();
                for (PoolBlock other : live) {
                    assertThat(overlap(b, other)).as("%s overlaps live %s", b, other).isFalse();
                }
                for (int i = 0; i < heldBlocks.size(); i++) {
                    if (overlap(b, heldBlocks.get(i))) {
                        assertThat(heldMarkers.get(i)).as("reuse of %s before its streams passed", heldBlocks.get(i))
                                .allMatch(m -> m.passed);
                    }
                }
                live.add(b);
                handedOut.add(b);
            } else if (op instanceof Free f) {
                if (live.isEmpty()) {
                    continue;
                }
                PoolBlock b = live.remove(f.pick() % live.size());
                List<FakeMarker> ms = new ArrayList<>();
                for (int i = 0; i < f.streams(); i++) {
                    ms.add(new FakeMarker());
                }
                markers.addAll(ms);
                if (!ms.isEmpty()) {
                    heldBlocks.add(b);
                    heldMarkers.add(ms);
                }
                a.free(b, ms);
            } else if (op instanceof Pass p) {
                if (!ignorePasses && !markers.isEmpty()) {
                    markers.get(p.pick() % markers.size()).passed = true;
                }
            }
            if (checkEachStep) {
                a.checkInvariants();
                assertThat(a.liveBlocks()).isEqualTo(live.size());
                assertThat(a.allocatedBytes()).isEqualTo(live.stream().mapToLong(PoolBlock::size).sum());
                assertThat(a.reservedBytes()).isEqualTo(a.allocatedBytes() + a.heldBytes() + a.freeBytes());
                assertThat(a.fragmentation()).isBetween(0.0, 1.0);
            }
        }
        Run result = new Run(handedOut, a.segments());
        // Nothing lost: with every block freed and every stream waited for, each segment is one free range.
        for (PoolBlock b : live) {
            a.free(b, List.of());
        }
        a.reclaimHeld(T);
        a.checkInvariants();
        assertThat(a.allocatedBytes()).isZero();
        assertThat(a.heldBytes()).isZero();
        assertThat(a.freeRanges()).isEqualTo(a.segments());
        assertThat(a.freeBytes()).isEqualTo(a.reservedBytes());
        assertThat(markers).allMatch(m -> m.closed);
        return result;
    }

    /** The pool's order: free ranges, then held blocks after waiting, then a new segment. */
    private static PoolBlock allocateLikeThePool(BlockAllocator a, long bytes) {
        PoolBlock b = a.allocate(bytes);
        if (b == null && a.hasHeld()) {
            a.reclaimHeld(T);
            b = a.allocate(bytes);
        }
        if (b == null) {
            long need = a.rounded(bytes);
            a.addSegment(a.noSplit() ? need : Math.max(SEGMENT, need));
            b = a.allocate(bytes);
        }
        assertThat(b).isNotNull();
        return b;
    }

    private static boolean overlap(PoolBlock x, PoolBlock y) {
        return x.segment() == y.segment() && x.offset() < y.end() && y.offset() < x.end();
    }
}
