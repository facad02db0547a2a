package io.symmem;

/**
 * A close refused because what it would free is still in use (a call running on the buffer past its
 * deadline, a captured graph of it still open). Nothing was freed; closing again once that use has
 * ended frees everything.
 */
public final class CloseRefusedException extends IllegalStateException {
    public CloseRefusedException(String message) {
        super(message);
    }
}
