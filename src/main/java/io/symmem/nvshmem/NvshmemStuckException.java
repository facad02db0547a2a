package io.symmem.nvshmem;

/**
 * A blocking NVSHMEM call that passed its deadline, or was abandoned because a peer is gone. NVSHMEM
 * cannot cancel it: the thread that made it stays inside, and the rank should leave.
 */
public class NvshmemStuckException extends IllegalStateException {
    public NvshmemStuckException(String message) {
        super(message);
    }
}
