package io.symmem.store.client;

import io.vertx.core.buffer.Buffer;
import java.util.concurrent.CompletableFuture;

/**
 * A frame to write; {@code answer} takes its answer (null for SET-like frames, which have none);
 * {@code onWritten} completes a fire-and-forget request once its frame is handed to the socket;
 * {@code then} is a follow-up written in the same write (a WAIT's GET, when the server holds it).
 */
record Outbound(Buffer frame, Answer answer, CompletableFuture<Void> onWritten, Outbound then) {
    Outbound(Buffer frame, Answer answer) {
        this(frame, answer, null, null);
    }

    Outbound(Buffer frame, Answer answer, CompletableFuture<Void> onWritten) {
        this(frame, answer, onWritten, null);
    }

    /** Nobody waits for it any more (its caller cancelled): it must not be written at all. */
    boolean abandoned() {
        return answer != null ? answer.abandoned() : onWritten != null && onWritten.isDone();
    }
}
