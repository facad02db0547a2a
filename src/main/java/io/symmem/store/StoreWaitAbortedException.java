package io.symmem.store;

/**
 * A store wait was cut short by something outside the store, such as a peer found dead: the wait
 * could never have been satisfied, so nobody waits for its deadline. {@link #reason()} says why.
 */
public abstract class StoreWaitAbortedException extends StoreException {
    protected StoreWaitAbortedException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Why the wait was cut short, without the operation ("rank 2 is gone (...)"). */
    public abstract String reason();
}
