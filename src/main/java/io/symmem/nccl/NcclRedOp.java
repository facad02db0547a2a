package io.symmem.nccl;

import io.symmem.collective.ReduceOp;

/**
 * Reductions of NCCL collectives, with NCCL's ncclRedOp_t values. NCCL has PROD, which symmem's own
 * kernels ({@link ReduceOp}) do not; {@link #of(ReduceOp)} bridges the shared four. Every op works
 * with every {@link NcclDataType} (NCCL 2.10+); AVG on integer types is NCCL's sum followed by an
 * integer division by the number of ranks.
 */
public enum NcclRedOp {
    SUM(0), PROD(1), MAX(2), MIN(3), AVG(4);

    private final int code;

    NcclRedOp(int code) {
        this.code = code;
    }

    /** The ncclRedOp_t value. */
    public int code() {
        return code;
    }

    public String shortName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static NcclRedOp of(ReduceOp op) {
        return switch (op) {
            case SUM -> SUM;
            case AVG -> AVG;
            case MAX -> MAX;
            case MIN -> MIN;
        };
    }
}
