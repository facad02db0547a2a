package io.symmem.memory;

/**
 * What this rank has asked of its pool, in order, condensed: a count, a running 64-bit hash of every
 * operation with its arguments, and the last {@link #RECENT} operations kept as numbers. Ranks
 * compare these at each segment rendezvous (and, in strict mode, at every allocation): equal
 * sequences give equal offsets, and a difference is reported with the operations on both sides
 * instead of surfacing later as a hang or as two ranks using different memory for one block.
 * Recording is a few multiplications and array stores, no allocation: it sits on the ~1 us path.
 */
final class AllocationSequence {
    static final int RECENT = 16;
    static final char ALLOCATE = 'A';
    static final char FREE = 'F';
    static final char RECORD_STREAM = 'S';
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private long count;
    private long hash = FNV_OFFSET;
    private final char[] ops = new char[RECENT];
    private final long[] firstArgs = new long[RECENT];
    private final long[] secondArgs = new long[RECENT];

    /** alloc: (bytes, 0); free and recordStream: (segment, offset) of the block. */
    void record(char op, long first, long second) {
        hash = mix(mix(mix(hash, op), first), second);
        int slot = (int) (count % RECENT);
        ops[slot] = op;
        firstArgs[slot] = first;
        secondArgs[slot] = second;
        count++;
    }

    private static long mix(long h, long value) {
        for (int i = 0; i < 8; i++) {
            h = (h ^ ((value >>> (8 * i)) & 0xff)) * FNV_PRIME;
        }
        return h;
    }

    long count() {
        return count;
    }

    long hash() {
        return hash;
    }

    /** Operation number n (0-based) if it is among the recent ones, else null. */
    String describe(long n) {
        if (n < 0 || n >= count || n < count - RECENT) {
            return null;
        }
        int slot = (int) (n % RECENT);
        return describe(ops[slot], firstArgs[slot], secondArgs[slot]);
    }

    static String describe(char op, long first, long second) {
        return switch (op) {
            case ALLOCATE -> "allocate " + first + " bytes";
            case FREE -> "free the block at segment " + first + " offset " + second;
            case RECORD_STREAM -> "recordStream on the block at segment " + first + " offset " + second;
            default -> "operation '" + op + "'";
        };
    }

    /** The recent operations as (number, op, first, second) quadruples, for the agreement message. */
    long[] recentAsNumbers() {
        long from = Math.max(0, count - RECENT);
        long[] out = new long[(int) (count - from) * 4];
        int i = 0;
        for (long n = from; n < count; n++) {
            int slot = (int) (n % RECENT);
            out[i++] = n;
            out[i++] = ops[slot];
            out[i++] = firstArgs[slot];
            out[i++] = secondArgs[slot];
        }
        return out;
    }
}
