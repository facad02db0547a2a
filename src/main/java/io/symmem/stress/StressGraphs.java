package io.symmem.stress;

import io.symmem.CapturedGraph;
import io.symmem.SymmemGroup;
import io.symmem.SymmetricBuffer;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;

/**
 * Captured graphs through the façade, as a serving loop uses them: a one-shot and a two-shot
 * all-reduce captured once each, replayed on new input every time with an ordinary all-reduce now and
 * then between replays, every result checked (a CUDA graph on the device backends, the captured code
 * on the host); and a copy inside a capture, which must be refused.
 */
final class StressGraphs {
    static final int REPLAYS = 60;
    private static final int COUNT = 4096;

    private StressGraphs() {
    }

    static void replayOnNewInput(SymmemGroup all, StressTally tally) {
        try (SymmetricBuffer b = all.allocate(DType.FLOAT32, COUNT);
             CapturedGraph oneShot = all.capture(b, () -> all.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT));
             CapturedGraph twoShot = all.capture(b, () -> all.allReduce(b, ReduceOp.SUM, Algorithm.TWO_SHOT))) {
            float[] got = new float[COUNT];
            for (int replay = 0; replay < REPLAYS; replay++) {
                b.write(input(all.rank(), replay));
                (replay % 2 == 0 ? oneShot : twoShot).replay();
                b.read(got);
                check(all, got, replay, tally);
                if (replay % 10 == 9) {
                    all.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT);
                    tally.count();
                }
            }
            try (CapturedGraph copies = all.capture(b, () -> b.write(new float[COUNT]))) {
                copies.replay();  // host: the copy runs (and is refused) here
                tally.misuseNotRefused("a write to the buffer inside a graph capture of group '" + all.name() + "'");
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("inside a graph")) {
                    tally.failed("a write inside a graph capture", e);
                }
            }
        } catch (RuntimeException e) {
            tally.failed("captured graphs replayed on new input in group '" + all.name() + "'", e);
        }
    }

    private static float[] input(int rank, int replay) {
        float[] x = new float[COUNT];
        for (int i = 0; i < COUNT; i++) {
            x[i] = (i * 13 + rank * 101 + replay * 7) % 251 / 16.0f - 8;
        }
        return x;
    }

    private static void check(SymmemGroup all, float[] got, int replay, StressTally tally) {
        for (int i = 0; i < COUNT; i++) {
            double expected = 0;
            for (int r = 0; r < all.size(); r++) {
                expected += (i * 13 + r * 101 + replay * 7) % 251 / 16.0f - 8;
            }
            if (Math.abs(got[i] - expected) > 1e-4) {
                tally.wrong("graph replay " + replay + " of group '" + all.name() + "', element " + i + ": " + got[i]
                        + ", expected " + expected);
                return;
            }
        }
        tally.count();
    }
}
