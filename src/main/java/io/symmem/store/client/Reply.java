package io.symmem.store.client;

import io.symmem.store.StoreException;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.ResponseDecoder;
import java.util.concurrent.CompletableFuture;

/** The answer of a request whose caller waits for its decoded value. */
final class Reply<T> extends Answer {
    private final ResponseDecoder<T> decoder;
    private final CompletableFuture<T> result;
    private T value;

    Reply(ResponseDecoder<T> decoder, CompletableFuture<T> result) {
        this.decoder = decoder;
        this.result = result;
    }

    @Override
    boolean consume(FrameInput in) {
        value = decoder.decode(in);
        return value != null;
    }

    @Override
    void afterConsumed() {
        result.complete(value);
    }

    @Override
    void fail(StoreException error) {
        result.completeExceptionally(error);
    }

    @Override
    boolean abandoned() {
        return result.isDone();
    }
}
