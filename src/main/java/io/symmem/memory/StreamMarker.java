package io.symmem.memory;

import java.time.Duration;

/**
 * A point in a stream that a freed pool block waits behind: the block is not handed out again before
 * the stream has passed it. The native form is a CUDA event ({@code NativeStreamMarker}); tests use
 * markers they pass by hand.
 */
public interface StreamMarker extends AutoCloseable {
    /** True once the stream has run past this point. Never waits. */
    boolean passed();

    /** Waits until {@link #passed()}, or fails at the deadline naming the stream. */
    void await(Duration timeout);

    @Override
    void close();
}
