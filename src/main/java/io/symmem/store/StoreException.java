package io.symmem.store;

/** Base of every failure the rendezvous store reports: lost connections, protocol errors, timeouts. */
public class StoreException extends RuntimeException {

    public StoreException(String message) {
        super(message);
    }

    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
