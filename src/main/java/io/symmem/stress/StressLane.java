package io.symmem.stress;

import io.symmem.SymmemGroup;
import io.symmem.SymmetricBuffer;
import io.symmem.cli.common.HalfFloats;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.stress.StressPlan.LaneSpec;
import io.symmem.stress.StressPlan.Step;
import java.util.List;

/**
 * One thread of a stress run: the steps of one lane on its group's buffers, each result checked
 * against a float64 reference of the inputs every rank of the group wrote. Stops at the first
 * failure (the group's later collectives would no longer pair up) and reports it in the tally.
 */
final class StressLane implements Runnable {
    private final long seed;
    private final LaneSpec lane;
    private final SymmemGroup group;
    private final List<SymmetricBuffer> buffers;
    private final StressTally tally;

    StressLane(long seed, LaneSpec lane, SymmemGroup group, List<SymmetricBuffer> buffers, StressTally tally) {
        this.seed = seed;
        this.lane = lane;
        this.group = group;
        this.buffers = buffers;
        this.tally = tally;
    }

    @Override
    public void run() {
        for (int s = 0; s < lane.steps().size(); s++) {
            Step step = lane.steps().get(s);
            SymmetricBuffer buffer = buffers.get(step.buffer());
            try {
                String wrong;
                if (step.kind() == StressPlan.Kind.ALL_TO_ALL_V) {
                    wrong = shuffle(buffer, s);
                } else {
                    write(buffer, s);
                    switch (step.kind()) {
                        case ALL_REDUCE -> group.allReduce(buffer, ReduceOp.SUM, step.algorithm());
                        case ALL_GATHER -> group.allGather(buffer);
                        case REDUCE_SCATTER -> group.reduceScatter(buffer, ReduceOp.SUM);
                        case BROADCAST -> group.broadcast(buffer, s % group.size());
                        default -> group.allToAll(buffer);
                    }
                    wrong = check(buffer, step, s);
                }
                if (wrong != null) {
                    tally.wrong(describe(step, s, buffer) + ": " + wrong);
                    return;
                }
                tally.count();
            } catch (RuntimeException e) {
                tally.failed(describe(step, s, buffer), e);
                return;
            }
        }
    }

    private String describe(Step step, int s, SymmetricBuffer b) {
        return "lane " + lane.id() + " step " + s + " (" + step.kind() + " " + step.algorithm() + ", group '" + group.name()
                + "', " + b.count() + " " + b.dtype().shortName() + ")";
    }

    private void write(SymmetricBuffer b, int s) {
        int n = Math.toIntExact(b.count());
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = StressPlan.input(seed, lane.id(), s, group.rank(), i);
        }
        write(b, values);
    }

    /**
     * An all-to-all-v step: this rank's parts for every rank (part p's element k is input(rank, p x capacity
     * + k)), shuffled; null when the counts returned and every element received are right.
     */
    private String shuffle(SymmetricBuffer b, int s) {
        int size = group.size();
        long capacity = group.allToAllVCapacity(b);
        float[] values = new float[Math.toIntExact(b.count())];
        long[] send = new long[size];
        int at = 0;
        for (int p = 0; p < size; p++) {
            send[p] = StressPlan.sendCount(seed, lane.id(), s, group.rank(), p, capacity, size);
            for (int k = 0; k < send[p]; k++) {
                values[at++] = StressPlan.input(seed, lane.id(), s, group.rank(), p * capacity + k);
            }
        }
        write(b, values);
        long[] received = group.allToAllV(b, send);
        float[] got = read(b);
        int offset = 0;
        for (int q = 0; q < size; q++) {
            long n = StressPlan.sendCount(seed, lane.id(), s, q, group.rank(), capacity, size);
            if (received[q] != n) {
                return received[q] + " elements from rank " + q + ", expected " + n + " (rank " + group.rank() + " of " + size + ")";
            }
            for (int k = 0; k < n; k++) {
                float expected = StressPlan.input(seed, lane.id(), s, q, group.rank() * capacity + k);
                if (got[offset + k] != expected) {
                    return "element " + k + " from rank " + q + " is " + got[offset + k] + ", expected " + expected + " (rank "
                            + group.rank() + " of " + size + ")";
                }
            }
            offset += (int) n;
        }
        return null;
    }

    private static void write(SymmetricBuffer b, float[] values) {
        int n = values.length;
        if (b.dtype() == DType.FLOAT32) {
            b.write(values);
            return;
        }
        short[] raw = new short[n];
        for (int i = 0; i < n; i++) {
            raw[i] = b.dtype() == DType.BFLOAT16 ? HalfFloats.toBf16(values[i]) : HalfFloats.toFp16(values[i]);
        }
        b.write(raw);
    }

    private float[] read(SymmetricBuffer b) {
        int n = Math.toIntExact(b.count());
        float[] values = new float[n];
        if (b.dtype() == DType.FLOAT32) {
            b.read(values);
            return values;
        }
        short[] raw = new short[n];
        b.read(raw);
        for (int i = 0; i < n; i++) {
            values[i] = b.dtype() == DType.BFLOAT16 ? HalfFloats.fromBf16(raw[i]) : HalfFloats.fromFp16(raw[i]);
        }
        return values;
    }

    /** Null when every element this rank owns after the collective is within the dtype's tolerance. */
    private String check(SymmetricBuffer b, Step step, int s) {
        float[] got = read(b);
        int size = group.size();
        long block = b.count() / size;
        long from = 0;
        long to = b.count();
        if (step.kind() == StressPlan.Kind.REDUCE_SCATTER) {
            from = group.rank() * block;
            to = from + block;
        }
        for (long i = from; i < to; i++) {
            double expected;
            boolean copied = true;  // moved, not reduced: exact
            if (step.kind() == StressPlan.Kind.ALL_GATHER) {
                expected = StressPlan.input(seed, lane.id(), s, (int) (i / block), i);
            } else if (step.kind() == StressPlan.Kind.BROADCAST) {
                expected = StressPlan.input(seed, lane.id(), s, s % size, i);
            } else if (step.kind() == StressPlan.Kind.ALL_TO_ALL) {
                expected = StressPlan.input(seed, lane.id(), s, (int) (i / block), group.rank() * block + i % block);
            } else {
                copied = false;
                expected = 0;
                for (int r = 0; r < size; r++) {
                    expected += StressPlan.input(seed, lane.id(), s, r, i);
                }
            }
            double v = got[(int) i];
            if (!(Math.abs(v - expected) <= (copied ? 0 : tolerance(b.dtype(), expected)))) {
                return "element " + i + " is " + v + ", expected " + expected + " (rank " + group.rank() + " of " + size + ")";
            }
        }
        return null;
    }

    /** float32 accumulates exactly here; bf16 and fp16 round the result to their 8 and 11 bits. */
    static double tolerance(DType dtype, double expected) {
        double scale = Math.max(1.0, Math.abs(expected));
        return switch (dtype) {
            case FLOAT32 -> 1e-6 * scale;
            case BFLOAT16 -> 1.0 / 128 * scale;
            case FLOAT16 -> 1.0 / 1024 * scale;
        };
    }
}
