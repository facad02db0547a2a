package io.symmem.store.client;

import io.symmem.store.StoreException;
import io.symmem.store.wire.FrameInput;

/** Takes the answer to one written request off the input. */
abstract class Answer {
    /** Reads the complete answer and returns true, or returns false if more bytes are needed. */
    abstract boolean consume(FrameInput in);

    /** Runs after the entry left the in-flight queue (so follow-up writes land behind it). */
    void afterConsumed() {}

    abstract void fail(StoreException error);

    /** True once nobody waits for this answer (the caller cancelled): the request need not be sent. */
    boolean abandoned() {
        return false;
    }
}
