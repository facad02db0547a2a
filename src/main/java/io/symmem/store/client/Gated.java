package io.symmem.store.client;

import io.symmem.store.StoreException;
import io.symmem.store.wire.FrameInput;
import java.util.function.BooleanSupplier;

/** A pipelined follow-up's answer: read it in any case, pass it on only if its wait was satisfied. */
final class Gated extends Answer {
    private final Answer inner;
    private final BooleanSupplier waitSatisfied;

    Gated(Answer inner, BooleanSupplier waitSatisfied) {
        this.inner = inner;
        this.waitSatisfied = waitSatisfied;
    }

    @Override
    boolean consume(FrameInput in) {
        return inner.consume(in);
    }

    @Override
    void afterConsumed() {
        if (waitSatisfied.getAsBoolean()) {
            inner.afterConsumed();
        }
    }

    @Override
    void fail(StoreException error) {
        inner.fail(error);
    }

    @Override
    boolean abandoned() {
        return inner.abandoned();
    }
}
