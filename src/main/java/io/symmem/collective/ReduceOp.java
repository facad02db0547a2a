package io.symmem.collective;

/** Reductions (symmem_reduce_op). AVG = SUM / world. */
public enum ReduceOp {
    SUM(0), AVG(1), MAX(2), MIN(3);

    private final int code;

    ReduceOp(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
