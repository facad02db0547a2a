package io.symmem.store;

/**
 * The connection to the store dropped under a request. Whether the world has failed with it (the rank
 * that hosted the store is gone) is for liveness to tell, which hears of the drop on a connection of its
 * own; a guarded store call therefore gives liveness a moment before reporting this (see
 * {@code Liveness.guard}).
 */
public class StoreConnectionLostException extends StoreException {

    public StoreConnectionLostException(String message) {
        super(message);
    }

    public StoreConnectionLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
