package io.symmem.memory;

/**
 * A pool allocation that cannot be served: the pool's limit, or the memory under it, is reached. The
 * pool never falls back to ordinary memory; the message shows the request and the pool's figures.
 */
public class PoolExhaustedException extends RuntimeException {
    private final PoolFigures figures;

    public PoolExhaustedException(String message, PoolFigures figures, Throwable cause) {
        super(message, cause);
        this.figures = figures;
    }

    public PoolFigures figures() {
        return figures;
    }
}
