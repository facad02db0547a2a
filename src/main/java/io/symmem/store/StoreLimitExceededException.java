package io.symmem.store;

/** A key, value or key list is larger than the store accepts; refused before anything is sent. */
public class StoreLimitExceededException extends IllegalArgumentException {

    public StoreLimitExceededException(String message) {
        super(message);
    }
}
