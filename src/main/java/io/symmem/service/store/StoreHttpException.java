package io.symmem.service.store;

/** A store route's failure with its HTTP status and key, answered as an {@link io.symmem.service.http.ErrorBody}. */
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
