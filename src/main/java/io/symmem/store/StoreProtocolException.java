package io.symmem.store;

/** A peer sent bytes that are not a valid TCPStore frame, or a frame over the configured limits. */
public final class StoreProtocolException extends StoreException {

    public StoreProtocolException(String message) {
        super(message);
    }
}
