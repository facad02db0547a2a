package io.symmem.memory;

/** The ranks of a pool asked for different allocation sequences; the message names the rank and the operations. */
public class PoolMismatchException extends RendezvousException {
    public PoolMismatchException(String message) {
        super(message);
    }
}
