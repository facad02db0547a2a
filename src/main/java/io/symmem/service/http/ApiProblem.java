package io.symmem.service.http;

import java.util.List;

/**
 * A /v1 route's failure with the status it means and, where ranks are concerned, the world ranks it
 * names (those that did not come in time, or that are gone); answered as an {@link ErrorBody}.
 */
public class ApiProblem extends RuntimeException {
    private final int status;
    private final List<Integer> ranks;

    public ApiProblem(int status, String message) {
        this(status, message, null, null);
    }

    public ApiProblem(int status, String message, List<Integer> ranks, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.ranks = ranks == null ? null : List.copyOf(ranks);
    }

    public int status() {
        return status;
    }

    /** The world ranks named, or null. */
    public List<Integer> ranks() {
        return ranks;
    }
}
