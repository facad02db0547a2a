package io.symmem.memory;

/** When a wait on a value signal returns (symmem_signal_cmp); values compare unsigned. */
public enum SignalCompare {
    /** The value equals the one waited for. */
    EQUAL(0),
    /** The value is the one waited for or more. */
    AT_LEAST(1);

    private final int code;

    SignalCompare(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
