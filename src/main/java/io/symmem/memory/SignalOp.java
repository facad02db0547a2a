package io.symmem.memory;

/** What a value signal does to the peer's value (symmem_signal_op). */
public enum SignalOp {
    /** The value becomes the one given. */
    SET(0),
    /** The value given is added to it (a count of what was handed over). */
    ADD(1);

    private final int code;

    SignalOp(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
