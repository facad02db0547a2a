package io.symmem.service.store;

/** A store route's failure with its HTTP status, mapped to {@link StoreHttpError} by {@link StoreExceptionMapper}. */
public class StoreHttpException extends RuntimeException {

    private final int status;
    private final String key;

    public StoreHttpException(int status, String message, String key) {
        super(message);
        this.status = status;
        this.key = key;
    }

    public int status() {
        return status;
    }

    public String key() {
        return key;
    }
}
