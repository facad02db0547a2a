package io.symmem.memory;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * One rank's part of a pool agreement (at each new segment, and at every allocation in strict mode):
 * its allocation sequence (count, hash, recent operations) and, for a segment, the size it is about
 * to add. {@link #check} runs on every rank with the same gathered list, so every rank fails alike.
 */
record PoolAgreement(long count, long hash, long segmentBytes, long[] recent) {

    static PoolAgreement of(AllocationSequence sequence, long segmentBytes) {
        return new PoolAgreement(sequence.count(), sequence.hash(), segmentBytes, sequence.recentAsNumbers());
    }

    byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(8 * (4 + recent.length));
        b.putLong(count).putLong(hash).putLong(segmentBytes).putLong(recent.length);
        for (long v : recent) {
            b.putLong(v);
        }
        return b.array();
    }

    static PoolAgreement decode(byte[] bytes, int rank) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (bytes.length < 32) {
            throw new PoolMismatchException("rank " + rank + " sent a malformed pool agreement (" + bytes.length + " bytes)");
        }
        long count = b.getLong();
        long hash = b.getLong();
        long segment = b.getLong();
        int n = (int) b.getLong();
        if (n < 0 || n % 4 != 0 || bytes.length != 32 + 8L * n) {
            throw new PoolMismatchException("rank " + rank + " sent a malformed pool agreement (" + bytes.length + " bytes)");
        }
        long[] recent = new long[n];
        for (int i = 0; i < n; i++) {
            recent[i] = b.getLong();
        }
        return new PoolAgreement(count, hash, segment, recent);
    }

    /** Operation number n of this rank, if it was among the recent ones it sent. */
    String operation(long n) {
        for (int i = 0; i < recent.length; i += 4) {
            if (recent[i] == n) {
                return AllocationSequence.describe((char) recent[i + 1], recent[i + 2], recent[i + 3]);
            }
        }
        return null;
    }

    /** Fails (on every rank alike) when any rank's sequence or segment size differs from rank 0's. */
    static void check(String group, String what, List<PoolAgreement> all) {
        PoolAgreement first = all.get(0);
        for (int r = 1; r < all.size(); r++) {
            PoolAgreement p = all.get(r);
            if (p.count == first.count && p.hash == first.hash && p.segmentBytes == first.segmentBytes) {
                continue;
            }
            throw new PoolMismatchException("pool of group '" + group + "' at " + what + ": rank " + r
                    + "'s pool allocations differ from rank 0's; " + difference(r, first, p)
                    + ". Pool allocation is collective: every rank must allocate, free and recordStream its blocks "
                    + "in the same order with the same sizes");
        }
    }

    private static String difference(int r, PoolAgreement zero, PoolAgreement other) {
        long common = Math.min(zero.count, other.count);
        // The first operation, among those both still remember, where they differ.
        long from = Math.max(0, Math.max(zero.count, other.count) - AllocationSequence.RECENT);
        for (long n = from; n < common; n++) {
            String a = zero.operation(n);
            String b = other.operation(n);
            if (a != null && b != null && !a.equals(b)) {
                return "operation #" + (n + 1) + " was '" + a + "' on rank 0 but '" + b + "' on rank " + r;
            }
        }
        if (zero.count != other.count) {
            long n = common;
            String a = zero.operation(n);
            String b = other.operation(n);
            return "rank 0 made " + zero.count + " pool operations, rank " + r + " " + other.count
                    + (a != null ? "; operation #" + (n + 1) + " on rank 0: '" + a + "'" : "")
                    + (b != null ? "; operation #" + (n + 1) + " on rank " + r + ": '" + b + "'" : "");
        }
        if (zero.segmentBytes != other.segmentBytes) {
            return "rank 0 adds a segment of " + zero.segmentBytes + " bytes, rank " + r + " of " + other.segmentBytes
                    + " (set the same SYMMEM_POOL_SEGMENT on every rank)";
        }
        return "both made " + zero.count + " operations but an earlier one differs (sequence hash "
                + Long.toHexString(zero.hash) + " on rank 0, " + Long.toHexString(other.hash) + " on rank " + r
                + "; only the last " + AllocationSequence.RECENT + " are kept; set SYMMEM_POOL_STRICT=true to catch it "
                + "at the allocation where it happens)";
    }
}
