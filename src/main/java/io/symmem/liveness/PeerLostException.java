package io.symmem.liveness;

import io.symmem.store.StoreWaitAbortedException;
import java.util.Set;

/**
 * An operation (a store wait, a rendezvous, a barrier, a collective) was cut short because a peer
 * rank or the store is gone. The message names the operation and the rank(s).
 */
public final class PeerLostException extends StoreWaitAbortedException {
    private final transient WorldFailure failure;

    PeerLostException(String operation, WorldFailure failure) {
        super(operation + ": aborted: " + failure.reason(), null);
        this.failure = failure;
    }

    @Override
    public String reason() {
        return failure.reason();
    }

    public WorldFailure failure() {
        return failure;
    }

    public Set<Integer> ranks() {
        return failure.ranks();
    }
}
