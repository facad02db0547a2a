package io.symmem.stress;

import io.symmem.collective.Algorithm;
import io.symmem.collective.AllToAllV;
import io.symmem.collective.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * What every rank of a stress run does, derived from the seed alone, so that every rank computes
 * the same plan and a failing run is repeated exactly with its seed. Groups overlap (world 4: every
 * rank, ranks {0, 1} and ranks {1, 2, 3}; world 2: two groups of the same two ranks); each lane is
 * one thread driving buffers of one group; its steps pick the collective, the algorithm and the
 * buffer at random. Where an allocation is collective over the whole world (nvshmem), the ranks
 * outside a lane's group allocate the same sizes at the same point in that group's rest
 * ({@link #restOf}).
 */
record StressPlan(long seed, List<GroupSpec> groups, List<LaneSpec> lanes) {
    /** Counts per buffer: odd sizes, sizes every group size divides, and a few that cross vector widths. */
    private static final long[] COUNTS = {1, 3, 12, 60, 1000, 4099, 4104, 16392};
    private static final DType[] DTYPES = {DType.FLOAT32, DType.BFLOAT16, DType.FLOAT16};
    private static final Algorithm[] ALGORITHMS = {Algorithm.ONE_SHOT, Algorithm.TWO_SHOT, Algorithm.AUTO};

    record GroupSpec(String name, int[] ranks) {
        boolean has(int worldRank) {
            for (int r : ranks) {
                if (r == worldRank) {
                    return true;
                }
            }
            return false;
        }
    }

    record BufferSpec(DType dtype, long count) {
    }

    enum Kind { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, ALL_TO_ALL, ALL_TO_ALL_V }

    record Step(Kind kind, int buffer, Algorithm algorithm) {
    }

    record LaneSpec(int id, int group, List<BufferSpec> buffers, List<Step> steps) {
    }

    static StressPlan of(long seed, int world, int threads, int buffersPerLane, long collectives) {
        if (world < 2) {
            throw new IllegalArgumentException("a stress run needs at least 2 ranks, got WORLD_SIZE=" + world);
        }
        List<GroupSpec> groups = groupsOf(world);
        SplittableRandom random = new SplittableRandom(seed);
        long stepsPerLane = (collectives + threads - 1) / threads;
        List<LaneSpec> lanes = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int g = t % groups.size();
            int size = groups.get(g).ranks().length;
            List<BufferSpec> buffers = new ArrayList<>();
            for (int b = 0; b < buffersPerLane; b++) {
                buffers.add(new BufferSpec(DTYPES[random.nextInt(DTYPES.length)], COUNTS[random.nextInt(COUNTS.length)]));
            }
            List<Step> steps = new ArrayList<>();
            for (long s = 0; s < stepsPerLane; s++) {
                int b = random.nextInt(buffersPerLane);
                Kind kind = kindOf(random.nextInt(10), buffers.get(b), size);
                steps.add(new Step(kind, b, ALGORITHMS[random.nextInt(ALGORITHMS.length)]));
            }
            lanes.add(new LaneSpec(t, g, buffers, steps));
        }
        return new StressPlan(seed, groups, lanes);
    }

    /**
     * Half of the steps all-reduce; the rest gather, scatter, broadcast and shuffle, each where the buffer
     * allows it (blocks need a count the group divides; an all-to-all-v needs room for the counts and at
     * least one element a rank), else all-reduce.
     */
    static Kind kindOf(int pick, BufferSpec buffer, int size) {
        if (pick < 5) {
            return Kind.ALL_REDUCE;
        }
        if (pick == 7) {
            return Kind.BROADCAST;
        }
        if (pick == 9) {
            return allToAllVCapacity(buffer, size) >= size ? Kind.ALL_TO_ALL_V : Kind.ALL_REDUCE;
        }
        if (buffer.count() % size != 0) {
            return Kind.ALL_REDUCE;
        }
        return pick == 5 ? Kind.ALL_GATHER : pick == 6 ? Kind.REDUCE_SCATTER : Kind.ALL_TO_ALL;
    }

    /** Elements a buffer holds for the façade's all-to-all-v in a group of {@code size} (0: none). */
    static long allToAllVCapacity(BufferSpec buffer, int size) {
        long offset = AllToAllV.facadeSplitsOffset(buffer.count() * buffer.dtype().bytes(), size);
        return offset < 0 ? 0 : offset / buffer.dtype().bytes();
    }

    /** How many elements rank {@code from} sends rank {@code to} in an all-to-all-v step: 0 to capacity / size. */
    static long sendCount(long seed, int lane, int step, int from, int to, long capacity, int size) {
        long h = seed * 0x2545F4914F6CDD1DL + lane * 0x9E3779B97F4A7C15L + step * 31L + from * 1_000_003L + to * 7919L;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 32;
        return Math.floorMod(h, capacity / size + 1);
    }

    /** Every rank; then two overlapping groups (world 2: the same two ranks again, under another name). */
    static List<GroupSpec> groupsOf(int world) {
        if (world == 2) {
            return twinsOf(world);
        }
        int[] all = twinsOf(world).get(0).ranks();
        int half = world / 2;
        int[] low = new int[half];
        for (int r = 0; r < half; r++) {
            low[r] = r;
        }
        int[] high = new int[world - half + 1];
        for (int r = 0; r < high.length; r++) {
            high[r] = half - 1 + r;
        }
        return List.of(new GroupSpec("stress-all", all), new GroupSpec("stress-low", low), new GroupSpec("stress-high", high));
    }

    /** Two groups of every rank, under two names. */
    static List<GroupSpec> twinsOf(int world) {
        int[] all = new int[world];
        for (int r = 0; r < world; r++) {
            all[r] = r;
        }
        return List.of(new GroupSpec("stress-all", all), new GroupSpec("stress-twin", all.clone()));
    }

    /**
     * The ranks of the world outside group {@code g}, as a group named after it ({@code <name>-rest}),
     * or empty when {@code g} spans the world. On nvshmem a heap allocation is collective over every
     * rank, so while a group's members allocate a lane's buffers, these ranks allocate the same sizes
     * in this group (and free them at the same point), which pairs the world's heap calls.
     */
    Optional<GroupSpec> restOf(int g, int world) {
        GroupSpec group = groups.get(g);
        int[] rest = IntStream.range(0, world).filter(r -> !group.has(r)).toArray();
        return rest.length == 0 ? Optional.empty() : Optional.of(new GroupSpec(group.name() + "-rest", rest));
    }

    long totalCollectives() {
        return lanes.stream().mapToLong(l -> l.steps().size()).sum();
    }

    /**
     * Rank {@code rank}'s input element {@code i} for step {@code step} of lane {@code lane}: a multiple
     * of 1/8 in [-8, 8], which float32, bf16 and fp16 all hold exactly, so sums over a few ranks stay
     * exact and a mixed-up input shows as a wrong value.
     */
    static float input(long seed, int lane, int step, int rank, long i) {
        long h = seed * 0x9E3779B97F4A7C15L + lane * 0xBF58476D1CE4E5B9L + step * 0x94D049BB133111EBL + rank * 1_000_003L + i;
        h ^= h >>> 31;
        h *= 0x7FB5D329728EA185L;
        h ^= h >>> 27;
        return (Math.floorMod(h, 129) - 64) / 8.0f;
    }
}
