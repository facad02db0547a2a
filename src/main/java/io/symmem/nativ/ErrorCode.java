package io.symmem.nativ;

/** The symmem_status codes of symmem.h. */
public enum ErrorCode {
    OK(0), INVALID_ARGUMENT(1), TIMEOUT(2), SYSTEM(3), NO_DEVICE(4), UNSUPPORTED(5), MISMATCH(6), STATE(7), ABORTED(8);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    static ErrorCode of(int code) {
        for (ErrorCode e : values()) {
            if (e.code == code) {
                return e;
            }
        }
        return SYSTEM;
    }
}
