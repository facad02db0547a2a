package io.symmem.nativ;

/** A libsymmem call failed; the message is the library's, which names what was wrong. */
public class NativeException extends RuntimeException {
    private final ErrorCode code;

    public NativeException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }

    /** A wait (barrier, signal, fd exchange) passed its deadline; the message names the peers. */
    public static final class Timeout extends NativeException {
        public Timeout(String message) {
            super(ErrorCode.TIMEOUT, message);
        }
    }

    /** A wait was cut short by {@link NativeCore#abort} (a peer is gone); the message has the reason. */
    public static final class Aborted extends NativeException {
        public Aborted(String message) {
            super(ErrorCode.ABORTED, message);
        }
    }

    /** The requested backend has no device here (e.g. "no CUDA device"). */
    public static final class NoDevice extends NativeException {
        public NoDevice(String message) {
            super(ErrorCode.NO_DEVICE, message);
        }
    }

    /** Peers disagree (buffer sizes, world); the message names the rank. */
    public static final class Mismatch extends NativeException {
        public Mismatch(String message) {
            super(ErrorCode.MISMATCH, message);
        }
    }

    /** An argument was rejected; the message names it. */
    public static final class InvalidArgument extends NativeException {
        public InvalidArgument(String message) {
            super(ErrorCode.INVALID_ARGUMENT, message);
        }
    }

    /** This build or backend does not support the call. */
    public static final class Unsupported extends NativeException {
        public Unsupported(String message) {
            super(ErrorCode.UNSUPPORTED, message);
        }
    }

    static NativeException of(ErrorCode code, String message) {
        return switch (code) {
            case TIMEOUT -> new Timeout(message);
            case ABORTED -> new Aborted(message);
            case NO_DEVICE -> new NoDevice(message);
            case MISMATCH -> new Mismatch(message);
            case INVALID_ARGUMENT -> new InvalidArgument(message);
            case UNSUPPORTED -> new Unsupported(message);
            default -> new NativeException(code, message);
        };
    }
}
