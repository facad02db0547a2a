package io.symmem.service.store;

import io.symmem.store.StoreException;
import io.symmem.store.StoreLimitExceededException;
import io.symmem.store.StoreTimeoutException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.concurrent.CompletionException;

/**
 * Turns failures of the store routes into {@code {"error": "...", "key": "..."}} with the status the
 * failure means: 400 bad input, 404 missing key, 413 oversized key or value, 503 store not reachable
 * or rank not started, 504 wait timed out (the store did not produce the key in time). Used by
 * {@link io.symmem.service.StoreResource}'s own mappers, so other resources keep their error format.
 */
public final class StoreExceptionMapper {

    /** Status of a wait that timed out: the store, behind this service, did not deliver in time. */
    public static final int WAIT_TIMEOUT = 504;

    private StoreExceptionMapper() {}

    public static Response toResponse(Throwable failure) {
        Throwable e = failure;
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof StoreHttpException http) {
            return json(http.status(), http.getMessage(), http.key());
        }
        if (e instanceof StoreTimeoutException timeout) {
            return json(WAIT_TIMEOUT, timeout.getMessage(), timeout.keys().isEmpty() ? null : String.join(",", timeout.keys()));
        }
        if (e instanceof StoreLimitExceededException) {
            return json(413, e.getMessage(), null);
        }
        if (e instanceof StoreException) {
            return json(503, e.getMessage(), null);
        }
        if (e instanceof IllegalArgumentException) {
            return json(400, e.getMessage(), null);
        }
        return json(500, String.valueOf(e.getMessage()), null);
    }

    private static Response json(int status, String message, String key) {
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(new StoreHttpError(message, key)).build();
    }
}
