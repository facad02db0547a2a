package io.symmem.store.client;

import io.symmem.store.StoreException;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.TcpStoreWire;
import java.util.function.BooleanSupplier;

/**
 * The answer to a CANCEL_WAIT that the server sends in order: a WAIT_CANCELED byte if the WAIT had
 * been answered STOP_WAITING before the cancel arrived; nothing otherwise (then the server answered
 * WAIT_CANCELED in the wait's own place, which is earlier in the stream, so this is known here).
 */
final class CancelAck extends Answer {
    private final BooleanSupplier waitSatisfied;

    CancelAck(BooleanSupplier waitSatisfied) {
        this.waitSatisfied = waitSatisfied;
    }

    @Override
    boolean consume(FrameInput in) {
        if (!waitSatisfied.getAsBoolean()) {
            return true;
        }
        if (!in.has(1)) {
            return false;
        }
        int answer = in.readUnsignedByte();
        if (answer != TcpStoreWire.WAIT_CANCELED) {
            throw new StoreProtocolException("CANCEL_WAIT answered " + answer + ", expected WAIT_CANCELED");
        }
        return true;
    }

    @Override
    void fail(StoreException error) {}
}
