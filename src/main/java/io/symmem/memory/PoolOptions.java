package io.symmem.memory;

import java.time.Duration;

/**
 * How a pool behaves. segmentBytes: what it adds per rendezvous (SYMMEM_POOL_SEGMENT; rounded up to
 * the alignment). alignment: of every block's offset and size, a power of two of at least the native
 * view alignment (4096 by default: an NCCL window's granularity, and more than the collectives'
 * vector width). noSplit: a block never shares a free range (PyTorch's no_split): it takes the whole
 * range, and a new segment is exactly as large as the request. limitBytes: the most the pool may
 * reserve (0 = none). strict: compare the ranks' sequences at every allocation. timeout: of segment
 * rendezvous, agreements and of waiting for held blocks' streams.
 */
public record PoolOptions(long segmentBytes, long alignment, boolean noSplit, long limitBytes, boolean strict,
        Duration timeout) {
    public static final long DEFAULT_ALIGNMENT = 4096;
    public static final long DEFAULT_SEGMENT = 64L << 20;

    public PoolOptions {
        if (alignment < 64 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("pool alignment must be a power of two of at least 64 bytes, got " + alignment);
        }
        if (segmentBytes <= 0) {
            throw new IllegalArgumentException("pool segment size (SYMMEM_POOL_SEGMENT) must be positive, got "
                    + segmentBytes + " bytes");
        }
        if (limitBytes < 0) {
            throw new IllegalArgumentException("pool limit (SYMMEM_POOL_LIMIT) must be >= 0 (0 = none), got " + limitBytes);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("pool timeout must be positive, got " + timeout);
        }
        segmentBytes = (segmentBytes + alignment - 1) / alignment * alignment;
    }

    public static PoolOptions defaults(Duration timeout) {
        return new PoolOptions(DEFAULT_SEGMENT, DEFAULT_ALIGNMENT, false, 0, false, timeout);
    }

    public PoolOptions withSegmentBytes(long bytes) {
        return new PoolOptions(bytes, alignment, noSplit, limitBytes, strict, timeout);
    }

    public PoolOptions withNoSplit(boolean value) {
        return new PoolOptions(segmentBytes, alignment, value, limitBytes, strict, timeout);
    }

    public PoolOptions withLimitBytes(long bytes) {
        return new PoolOptions(segmentBytes, alignment, noSplit, bytes, strict, timeout);
    }

    public PoolOptions withStrict(boolean value) {
        return new PoolOptions(segmentBytes, alignment, noSplit, limitBytes, value, timeout);
    }

    public PoolOptions withAlignment(long value) {
        return new PoolOptions(segmentBytes, value, noSplit, limitBytes, strict, timeout);
    }
}
