package io.symmem.store.etcd;

import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** How a failed etcd call is read: worth another try (another member may answer), or final. */
final class EtcdFailures {

    private EtcdFailures() {}

    /** The failure itself, without the wrappers futures put around it. */
    static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * True when the call may succeed if made again: the member was unreachable or lost its leader,
     * or the call ran out of its own time. Callers only retry calls that are safe to repeat.
     */
    static boolean worthRetrying(Throwable error) {
        Throwable e = unwrap(error);
        if (e instanceof ConflictRetry) {
            return true;
        }
        Status.Code code = code(e);
        if (code != null) {
            // A member killed under a call shows as UNAVAILABLE, but also as INTERNAL (the stream reset with
            // the connection) or UNKNOWN; every call given here is safe to repeat. CANCELLED is final: it is
            // this client closing.
            return code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED || code == Status.Code.ABORTED
                    || code == Status.Code.INTERNAL || code == Status.Code.UNKNOWN;
        }
        // A connection that closed under the call, before gRPC could give it a status.
        return e instanceof java.io.IOException || e.getClass().getName().startsWith("io.vertx.core.VertxException");
    }

    static Status.Code code(Throwable error) {
        Throwable e = unwrap(error);
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof EtcdException etcd) {
                ErrorCode code = etcd.getErrorCode();
                try {
                    return Status.Code.valueOf(code.name());
                } catch (IllegalArgumentException notGrpc) {
                    return Status.Code.UNKNOWN;
                }
            }
            if (t instanceof StatusRuntimeException s) {
                return s.getStatus().getCode();
            }
            if (t instanceof StatusException s) {
                return s.getStatus().getCode();
            }
        }
        return null;
    }

    /** etcd refused a request over its --max-request-bytes. */
    static boolean tooLarge(Throwable error) {
        return String.valueOf(unwrap(error).getMessage()).contains("request is too large");
    }

    /** etcd refused a transaction over its --max-txn-ops. */
    static boolean tooManyOps(Throwable error) {
        return String.valueOf(unwrap(error).getMessage()).contains("too many operations in txn request");
    }

    /** One line for a message: the gRPC code and what the member said. */
    static String describe(Throwable error) {
        Throwable e = unwrap(error);
        Status.Code code = code(e);
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage().replaceAll("\\s+", " ");
        return code == null || message.startsWith(code.name()) ? message : code + ": " + message;
    }

    /** A compare-and-write lost to a concurrent writer: read again and retry at once. */
    static final class ConflictRetry extends RuntimeException {
        static final ConflictRetry INSTANCE = new ConflictRetry();

        private ConflictRetry() {
            super("the key changed between read and write", null, false, false);
        }
    }
}
