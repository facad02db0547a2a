package io.symmem.memory;

/** A rendezvous of a symmetric buffer failed; the message names the ranks and what differs. */
public class RendezvousException extends RuntimeException {
    public RendezvousException(String message) {
        super(message);
    }

    public RendezvousException(String message, Throwable cause) {
        super(message, cause);
    }
}
