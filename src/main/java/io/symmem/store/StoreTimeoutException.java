package io.symmem.store;

import java.util.List;

/** A wait on the store passed its deadline; {@link #keys()} are the keys that were still missing. */
public class StoreTimeoutException extends StoreException {

    private final List<String> keys;

    public StoreTimeoutException(String message, List<String> keys) {
        super(message);
        this.keys = List.copyOf(keys);
    }

    /** The keys still missing when the deadline passed (all awaited keys where that could not be checked). */
    public List<String> keys() {
        return keys;
    }
}
