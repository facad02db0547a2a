package io.symmem;

/**
 * A group or buffer of a generation of the world that was lost: after {@link SymmemWorld#formAgain()}
 * the world is a new generation, and what was made in the old one is gone (its peers' memory and signal
 * state with it). Make the group again and allocate its buffers again.
 */
public final class GenerationLostException extends IllegalStateException {
    public GenerationLostException(String message) {
        super(message);
    }
}
