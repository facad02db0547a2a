package io.symmem;

import static io.symmem.SymmemFacadeTest.twoRanks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.AllToAll;
import io.symmem.collective.AllToAllV;
import io.symmem.collective.Broadcast;
import io.symmem.collective.DType;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Broadcast, all-to-all, all-to-all-v and one-sided put/get through the façade, two ranks as threads of this
 * JVM on the host backend, every element checked. The all-to-all-v runs on two buffers from two threads of
 * each rank at once; counts that do not fit fail on both ranks and leave the buffer usable.
 */
class ShuffleAndOneSidedTest {

    /** Element i of rank `from`'s part for rank `to` in round `round`: exact in float32. */
    private static float element(int from, int to, int i, int round) {
        return from * 1_000_000 + to * 100_000 + round * 1_000 + i % 997;
    }

    /** How many elements rank `from` sends rank `to` in round `round`, the same on every rank. */
    private static long count(int from, int to, int round, long share) {
        return switch (round % 4) {
            case 0 -> 0;                                    // nothing moves
            case 1 -> to == round % 2 ? share - from : 0;   // everything to one rank
            default -> new SplittableRandom(round * 31L + from * 7L + to).nextLong(share + 1);
        };
    }

    /** `rounds` checked shuffles on b; "ok" or the first difference. */
    private static String shuffles(SymmemGroup group, SymmetricBuffer b, int rank, int firstRound, int rounds) {
        long capacity = group.allToAllVCapacity(b);
        long share = capacity / group.size();
        for (int round = firstRound; round < firstRound + rounds; round++) {
            long[] send = new long[group.size()];
            List<Float> input = new ArrayList<>();
            for (int to = 0; to < group.size(); to++) {
                send[to] = count(rank, to, round, share);
                for (int i = 0; i < send[to]; i++) {
                    input.add(element(rank, to, i, round));
                }
            }
            float[] in = new float[input.size()];
            for (int i = 0; i < in.length; i++) {
                in[i] = input.get(i);
            }
            b.write(in);
            long[] received = group.allToAllV(b, send);
            int total = 0;
            for (int from = 0; from < group.size(); from++) {
                long want = count(from, rank, round, share);
                if (received[from] != want) {
                    return "round " + round + ": " + received[from] + " elements from rank " + from + ", expected " + want;
                }
                float[] part = new float[(int) want];
                b.read(total, part);
                for (int i = 0; i < part.length; i++) {
                    if (part[i] != element(from, rank, i, round)) {
                        return "round " + round + ": element " + i + " from rank " + from + " is " + part[i];
                    }
                }
                total += (int) want;
            }
            group.barrier(java.time.Duration.ofSeconds(20));  // both ranks read their result before new input
        }
        return "ok";
    }

    @Test
    void shufflesOfVariableSizesAreExactOnTwoBuffersFromTwoThreadsAtOnce() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer one = group.allocate("shuffle-one", DType.FLOAT32, 3001);
                    SymmetricBuffer two = group.allocate("shuffle-two", DType.FLOAT32, 1999)) {
                // The last 8 x (3 x 2 + 1) bytes hold the counts sent and received, in whole int64 slots.
                assertThat(group.allToAllVCapacity(one)).isEqualTo((3001 * 4 - 56) / 8 * 8 / 4);
                ExecutorService threads = Executors.newFixedThreadPool(2);
                try {
                    Future<String> a = threads.submit(() -> shuffles(group, one, world.rank(), 0, 24));
                    Future<String> b = threads.submit(() -> shuffles(group, two, world.rank(), 100, 24));
                    return a.get(60, TimeUnit.SECONDS) + " " + b.get(60, TimeUnit.SECONDS);
                } finally {
                    threads.shutdownNow();
                }
            }
        });
        assertThat(results).containsExactly("ok ok", "ok ok");
    }

    @Test
    void countsThatDoNotFitFailOnEveryRankAndTheBufferStaysUsable() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 64)) {
                long capacity = group.allToAllVCapacity(b);
                b.write(new float[] {1, 2, 3, 4});
                // Rank 1 sends rank 0 more than rank 0 holds.
                long[] tooMany = world.rank() == 1 ? new long[] {capacity, 0} : new long[] {1, 1};
                assertThatThrownBy(() -> group.allToAllV(b, tooMany)).isInstanceOf(NativeException.InvalidArgument.class)
                        .hasMessageContaining("rank 0 would receive " + (capacity + 1) + " elements, more than its output holds ("
                                + capacity + ")")
                        .hasMessageContaining("the part from rank 1").hasMessageContaining("nothing was written");
                float[] kept = new float[4];
                b.read(kept);
                assertThat(kept).containsExactly(1, 2, 3, 4);
                long[] negative = world.rank() == 0 ? new long[] {1, -2} : new long[] {1, 1};
                assertThatThrownBy(() -> group.allToAllV(b, negative)).isInstanceOf(NativeException.InvalidArgument.class)
                        .hasMessageContaining("rank 0's split for rank 1 is -2");
                assertThatThrownBy(() -> group.allToAllV(b, new long[] {1})).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("sendCounts has 1 counts; it needs one per rank (2)");
                // Its counts travel through host copies: not inside a graph (the host backend runs the body at
                // each replay, where it is refused; a GPU capture refuses it at once).
                try (CapturedGraph g = group.capture(b, () -> group.allToAllV(b, new long[] {1, 1}))) {
                    assertThatThrownBy(g::replay).hasStackTraceContaining("allToAllV on group 'world' inside a graph");
                }
                // In step: the next shuffle is right on both ranks.
                b.write(new float[] {10 + world.rank(), 20 + world.rank()});
                long[] got = group.allToAllV(b, new long[] {1, 1});
                float[] out = new float[2];
                b.read(out);
                return Arrays.toString(got) + " " + Arrays.toString(out);
            }
        });
        assertThat(results).containsExactly("[1, 1] [10.0, 11.0]", "[1, 1] [20.0, 21.0]");
    }

    @Test
    void broadcastFromEachRootAndAllToAllOfEqualBlocks() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup group = world.group();
            StringBuilder seen = new StringBuilder();
            try (SymmetricBuffer f = group.allocate(DType.FLOAT32, 5); SymmetricBuffer h = group.allocate(DType.BFLOAT16, 3)) {
                for (int root = 0; root < 2; root++) {
                    f.write(new float[] {world.rank(), 1, 2, 3, 10 * world.rank()});
                    group.broadcast(f, root);
                    float[] got = new float[5];
                    f.read(got);
                    seen.append(Arrays.toString(got)).append(' ');
                    group.barrier(java.time.Duration.ofSeconds(20));
                }
                h.write(new short[] {(short) (0x3f80 + world.rank()), (short) 0x7fc1, (short) 0xffff});
                group.broadcast(h, 1);
                short[] bits = new short[3];
                h.read(bits);
                seen.append(Integer.toHexString(bits[0] & 0xffff)).append(',').append(Integer.toHexString(bits[1] & 0xffff))
                        .append(',').append(Integer.toHexString(bits[2] & 0xffff)).append(' ');
                assertThatThrownBy(() -> group.broadcast(f, 2)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("root 2 is out of range 0..1");
            }
            try (SymmetricBuffer blocks = group.allocate(DType.FLOAT32, 6)) {
                int r = world.rank();
                blocks.write(new float[] {r * 10, r * 10 + 1, r * 10 + 2, r * 10 + 5, r * 10 + 6, r * 10 + 7});
                group.allToAll(blocks);
                float[] got = new float[6];
                blocks.read(got);
                seen.append(Arrays.toString(got));
            }
            return seen.toString();
        });
        assertThat(results.get(0)).isEqualTo(
                "[0.0, 1.0, 2.0, 3.0, 0.0] [1.0, 1.0, 2.0, 3.0, 10.0] 3f81,7fc1,ffff [0.0, 1.0, 2.0, 10.0, 11.0, 12.0]");
        assertThat(results.get(1)).isEqualTo(
                "[0.0, 1.0, 2.0, 3.0, 0.0] [1.0, 1.0, 2.0, 3.0, 10.0] 3f81,7fc1,ffff [5.0, 6.0, 7.0, 15.0, 16.0, 17.0]");
    }

    @Test
    void theLowerLayerRunsThemOutOfPlaceIntoLocalMemory() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 16)) {
                SymmetricMemory memory = b.memory();
                java.time.Duration deadline = java.time.Duration.ofSeconds(20);
                int r = world.rank();
                // Input: rank 0 sends 1 element to rank 0 and 3 to rank 1; rank 1 sends 2 and 0. Splits at byte 32.
                b.write(new float[] {r * 10, r * 10 + 1, r * 10 + 2, r * 10 + 3});
                long[] send = r == 0 ? new long[] {1, 3, 0} : new long[] {2, 0, 0};
                ByteBuffer splits = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder());
                for (long n : send) {
                    splits.putLong(n);
                }
                splits.flip();
                b.write(8, splits);
                try (LocalBuffer out = memory.allocateLocal(4 * 8); LocalBuffer counts = memory.allocateLocal(32)) {
                    AllToAllV.run(memory, DType.FLOAT32, 32, out, 8, counts, null, deadline);
                    float[] got = new float[3];
                    out.copyTo(got, 0);
                    ByteBuffer c = ByteBuffer.allocateDirect(32).order(ByteOrder.nativeOrder());
                    counts.copyTo(c, 0);
                    c.flip();
                    String text = Arrays.toString(got) + " counts " + c.getLong() + "," + c.getLong() + " at " + c.getLong()
                            + "," + c.getLong();
                    memory.barrier(0, deadline);
                    // Out of place, the input stays; broadcast and all-to-all into local memory too.
                    Broadcast.run(memory, DType.FLOAT32, 2, 1, out, null, deadline);
                    float[] root = new float[2];
                    out.copyTo(root, 0);
                    AllToAll.run(memory, DType.FLOAT32, 2, out, null, deadline);
                    float[] blocks = new float[4];
                    out.copyTo(blocks, 0);
                    assertThatThrownBy(() -> AllToAllV.run(memory, DType.FLOAT32, 30, out, 8, counts, null, deadline))
                            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("splitsOffset 30 must be a multiple of 8");
                    return text + " root " + Arrays.toString(root) + " blocks " + Arrays.toString(blocks);
                }
            }
        });
        assertThat(results.get(0)).isEqualTo("[0.0, 10.0, 11.0] counts 1,2 at 0,1 root [10.0, 11.0] blocks [0.0, 1.0, 10.0, 11.0]");
        assertThat(results.get(1)).isEqualTo("[1.0, 2.0, 3.0] counts 3,0 at 0,3 root [10.0, 11.0] blocks [2.0, 3.0, 12.0, 13.0]");
    }

    @Test
    void theLowerLayerPutsAndGetsOnAStreamFromLocalMemory() throws Exception {
        List<String> results = twoRanks(world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 8)) {
                SymmetricMemory memory = b.memory();
                java.time.Duration deadline = java.time.Duration.ofSeconds(20);
                int peer = 1 - world.rank();
                try (LocalBuffer local = memory.allocateLocal(4 * 4); io.symmem.nativ.NativeStream stream = memory.createStream()) {
                    local.copyFrom(new float[] {10 * world.rank() + 1, 10 * world.rank() + 2, 10 * world.rank() + 3, 0}, 0);
                    // Elements 1..2 of the local buffer into the peer's elements 5..6, then a signal behind them.
                    memory.put(peer, 5 * 4, local, 4, 8, stream);
                    memory.putSignal(peer, 2, stream, deadline);
                    memory.waitSignal(peer, 2, stream, deadline);
                    memory.synchronize(stream);
                    float[] mine = new float[8];
                    b.read(mine);
                    // The peer's elements 5..6 back into the local buffer's elements 0..1.
                    memory.get(peer, 5 * 4, local, 0, 8, stream);
                    memory.synchronize(stream);
                    float[] back = new float[2];
                    local.copyTo(back, 0);
                    assertThatThrownBy(() -> memory.put(peer, 0, local, 12, 8, stream))
                            .isInstanceOf(NativeException.InvalidArgument.class)
                            .hasMessageContaining("src: offset 12 + bytes 8 exceed the local buffer's 16 bytes");
                    return Arrays.toString(mine) + " " + Arrays.toString(back);
                }
            }
        });
        assertThat(results.get(0)).isEqualTo("[0.0, 0.0, 0.0, 0.0, 0.0, 12.0, 13.0, 0.0] [2.0, 3.0]");
        assertThat(results.get(1)).isEqualTo("[0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.0] [12.0, 13.0]");
    }

    @Test
    void putWithSignalHandsValuesToThePeerAndGetReadsThePeersBuffer() throws Exception {
        // A rank that stops early leaves its peer waiting for a signal: 10 s, not the default minute.
        List<String> results = twoRanks(builder -> builder.collectiveTimeout(java.time.Duration.ofSeconds(10)), world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 8)) {
                int peer = 1 - world.rank();
                b.write(new float[] {100 + world.rank(), 0, 0, 0, 0, 0, 0, 0});
                group.barrier(java.time.Duration.ofSeconds(20));  // no put lands before the peer's own write
                StringBuilder seen = new StringBuilder();
                // A pipeline of 20 hand-offs each way: rank 0 puts into rank 1's elements 4..7, rank 1 into rank 0's.
                for (int step = 0; step < 20; step++) {
                    if (world.rank() == 0) {
                        b.putWithSignal(peer, 4, new float[] {step, step + 1, step + 2, step + 3}, 1);
                        b.waitSignal(peer, 2);
                    } else {
                        b.waitSignal(peer, 1);
                        float[] handed = new float[4];
                        b.read(4, handed);
                        assertThat(handed).as("step %d", step).containsExactly(step, step + 1, step + 2, step + 3);
                        b.putWithSignal(peer, 4, new float[] {-step, 0, 0, 0}, 2);
                    }
                }
                group.barrier(java.time.Duration.ofSeconds(20));
                float[] fromPeer = new float[1];
                b.get(peer, 0, fromPeer);
                float[] last = new float[1];
                b.read(4, last);
                seen.append("peer's first ").append(fromPeer[0]).append(" last handed ").append(last[0]);
                assertThatThrownBy(() -> b.waitSignal(world.rank(), 0)).hasMessageContaining("is this rank");
                assertThatThrownBy(() -> b.put(peer, 6, new float[3])).isInstanceOf(IndexOutOfBoundsException.class)
                        .hasMessageContaining("elements 6..9 are outside the buffer of 8");
                return seen.toString();
            }
        });
        assertThat(results.get(0)).isEqualTo("peer's first 101.0 last handed -19.0");
        assertThat(results.get(1)).isEqualTo("peer's first 100.0 last handed 19.0");
    }

    @Test
    void countedPutsRunAheadOfTheConsumerThroughARingOfSlots() throws Exception {
        // Rank 0 produces 60 chunks of 4 into rank 1's 3 slots, adding 1 to its count after each; rank 1 reads
        // each chunk once the count reaches it and gives the slot back by setting its credit on rank 0. No
        // reply per chunk: the producer waits only when all 3 slots are full.
        List<String> results = twoRanks(builder -> builder.collectiveTimeout(java.time.Duration.ofSeconds(10)), world -> {
            SymmemGroup group = world.group();
            try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 12)) {
                int peer = 1 - world.rank();
                group.barrier(java.time.Duration.ofSeconds(20));
                long sum = 0;
                for (int chunk = 0; chunk < 60; chunk++) {
                    int slot = chunk % 3;
                    if (world.rank() == 0) {
                        if (chunk >= 3) {
                            b.waitSignalAtLeast(peer, 1, chunk - 2);
                        }
                        b.put(peer, slot * 4L, new float[] {chunk, chunk * 2, chunk * 3, chunk * 4});
                        b.signalAdd(peer, 0, 1);
                    } else {
                        b.waitSignalAtLeast(peer, 0, chunk + 1);
                        float[] got = new float[4];
                        b.read(slot * 4L, got);
                        assertThat(got).as("chunk %d", chunk).containsExactly(chunk, chunk * 2, chunk * 3, chunk * 4);
                        sum += (long) got[3];
                        b.signalSet(peer, 1, chunk + 1);
                    }
                }
                group.barrier(java.time.Duration.ofSeconds(20));
                SymmetricMemory memory = b.memory();
                if (world.rank() == 1) {
                    memory.waitSignalValue(peer, 0, io.symmem.memory.SignalCompare.EQUAL, 60, java.time.Duration.ofSeconds(5));
                    assertThatThrownBy(() -> memory.waitSignalValue(peer, 0, io.symmem.memory.SignalCompare.AT_LEAST, 61,
                            java.time.Duration.ofMillis(200)))
                            .isInstanceOf(NativeException.class)
                            .hasMessageContaining("wait_signal_value(peer 0, channel 0, >= 61): timed out after 200 ms; "
                                    + "rank 0's value is 60");
                }
                assertThatThrownBy(() -> b.signalAdd(peer, 16, 1)).hasMessageContaining("channel 16 is out of range 0..15");
                assertThatThrownBy(() -> b.signalAdd(world.rank(), 0, 1)).hasMessageContaining("is this rank");
                group.barrier(java.time.Duration.ofSeconds(20));
                return "sum " + sum;
            }
        });
        assertThat(results.get(0)).isEqualTo("sum 0");
        assertThat(results.get(1)).isEqualTo("sum " + 4 * (59 * 60 / 2));
    }
}
