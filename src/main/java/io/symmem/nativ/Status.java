package io.symmem.nativ;

/** Turns a symmem_status into an exception carrying the thread's last-error message. */
final class Status {
    private Status() {
    }

    static void check(int status, String call) {
        if (status != 0) {
            String message = SymmemLibrary.symmem_last_error().getString();
            throw NativeException.of(ErrorCode.of(status), message.isEmpty() ? call + " failed (status " + status + ")" : message);
        }
    }

    static int millis(java.time.Duration timeout) {
        long ms = timeout.toMillis();
        if (ms <= 0 || ms > Integer.MAX_VALUE) {
            throw new NativeException.InvalidArgument("timeout must be between 1 ms and 24 days, got " + timeout);
        }
        return (int) ms;
    }
}
