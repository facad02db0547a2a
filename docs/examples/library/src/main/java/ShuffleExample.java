import io.symmem.*;
import io.symmem.collective.*;
import java.util.SplittableRandom;

/**
 * A shuffle between the ranks of one node: every rank holds records (key, value) of its own, a different
 * number on each rank, and sends each record to the rank that owns its key (key % ranks) with one
 * all-to-all-v. Each rank then sums the values of its keys and checks every sum against the records of
 * all ranks, which it can regenerate from their seeds.
 */
public class ShuffleExample {
    static final int KEYS = 64;

    /** Rank r's records: a count of its own, keys skewed towards small ones, values that sum exactly in float32. */
    static float[][] records(int rank) {
        SplittableRandom random = new SplittableRandom(1000 + rank);
        int n = 300 + 211 * rank % 500;
        float[][] out = new float[n][2];
        for (int i = 0; i < n; i++) {
            out[i][0] = (int) Math.floor(KEYS * Math.pow(random.nextDouble(), 2));
            out[i][1] = random.nextInt(100);
        }
        return out;
    }

    public static void main(String[] args) {
        try (SymmemWorld world = Symmem.fromEnvironment();
                SymmetricBuffer buffer = world.group().allocate(DType.FLOAT32, 2 * 4096 + 64)) {
            SymmemGroup group = world.group();
            int ranks = group.size();
            float[][] mine = records(group.rank());
            // Pack the records by owner: owner 0's first, then owner 1's, two floats each.
            long[] send = new long[ranks];
            for (float[] r : mine) {
                send[(int) r[0] % ranks] += 2;
            }
            float[] packed = new float[2 * mine.length];
            long[] next = new long[ranks];
            for (int owner = 1; owner < ranks; owner++) {
                next[owner] = next[owner - 1] + send[owner - 1];
            }
            for (float[] r : mine) {
                int at = (int) next[(int) r[0] % ranks];
                packed[at] = r[0];
                packed[at + 1] = r[1];
                next[(int) r[0] % ranks] += 2;
            }
            buffer.write(packed);
            long[] received = group.allToAllV(buffer, send);

            long total = 0;
            for (long n : received) {
                total += n;
            }
            float[] mineNow = new float[(int) total];
            buffer.read(mineNow);
            double[] sums = new double[KEYS];
            for (int i = 0; i < mineNow.length; i += 2) {
                sums[(int) mineNow[i]] += mineNow[i + 1];
            }
            // The check: every key this rank owns, summed over every rank's records.
            double[] expected = new double[KEYS];
            for (int r = 0; r < ranks; r++) {
                for (float[] rec : records(r)) {
                    expected[(int) rec[0]] += rec[1];
                }
            }
            int keys = 0;
            String verdict = "ok";
            for (int key = group.rank(); key < KEYS; key += ranks) {
                keys++;
                if (sums[key] != expected[key]) {
                    verdict = "WRONG: key " + key + " sums to " + sums[key] + ", expected " + expected[key];
                }
            }
            System.out.println("rank " + group.rank() + " of " + ranks + ": sent " + mine.length + " records, received "
                    + total / 2 + " (" + java.util.Arrays.toString(received) + " floats from each rank), " + keys
                    + " keys checked: " + verdict);
        }
    }
}
