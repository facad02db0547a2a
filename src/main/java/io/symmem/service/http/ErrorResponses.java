package io.symmem.service.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import io.symmem.service.store.StoreHttpException;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimitExceededException;
import io.symmem.store.StoreTimeoutException;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.concurrent.CompletionException;
import org.jboss.logging.Logger;

/**
 * Turns a failure of a /v1 route into the status it means and an {@link ErrorBody}: 400 bad input (a
 * parameter, a malformed JSON body, a value add cannot work on), 404 missing key or no such route,
 * 405/406/415 method or media type not served, 413 key or value over the store's limits, 503 store not
 * reachable or rank not started, 504 wait timed out (the store did not produce the key in time), 500
 * anything else (logged with its stack, as it is a bug).
 */
public final class ErrorResponses {

    private static final Logger LOG = Logger.getLogger(ErrorResponses.class);

    /** Status of a wait that timed out: the store, behind this service, did not deliver in time. */
    public static final int WAIT_TIMEOUT = 504;

    private ErrorResponses() {}

    /** @param request the request that failed (names the route in messages); may be null */
    public static Response toResponse(Throwable failure, HttpServerRequest request) {
        Throwable e = failure;
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof StoreHttpException http) {
            return json(http.status(), http.getMessage(), http.key());
        }
        if (e instanceof ApiProblem problem) {
            return Response.status(problem.status()).type(ErrorBody.MEDIA_TYPE)
                    .entity(ErrorBody.of(problem.status(), problem.getMessage(), null, problem.ranks())).build();
        }
        if (e instanceof WebApplicationException web) {
            return fromRestLayer(web, request);
        }
        if (e instanceof JsonProcessingException json) {
            return json(400, malformedBody(json, request), null);
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
        if (request != null && request.response().headWritten()) {
            // Answered already by the HTTP layer (e.g. Quarkus's 413 for a chunked body over the limit).
            LOG.debugf("%s failed after it was answered: %s", route(request), e);
        } else {
            LOG.errorf(e, "%s failed", route(request));
        }
        return json(500, route(request) + " failed: " + e, null);
    }

    public static Response json(int status, String message, String key) {
        return Response.status(status).type(ErrorBody.MEDIA_TYPE).entity(ErrorBody.of(status, message, key)).build();
    }

    /** The REST layer's own refusals (no such route, method, media type; unreadable body), headers such as Allow kept. */
    private static Response fromRestLayer(WebApplicationException web, HttpServerRequest request) {
        Response original = web.getResponse();
        int status = original.getStatus();
        String message;
        if (web.getCause() instanceof JsonProcessingException json) {
            status = 400;
            message = malformedBody(json, request);
        } else if (web instanceof NotFoundException) {
            message = "no route " + route(request);
        } else if (web instanceof NotAllowedException) {
            message = "method " + method(request) + " is not allowed on " + path(request)
                    + (original.getAllowedMethods().isEmpty() ? "" : " (allowed: " + String.join(", ", original.getAllowedMethods()) + ")");
        } else if (web instanceof NotSupportedException) {
            message = route(request) + " does not take a body of Content-Type '" + header(request, "Content-Type") + "'";
        } else if (web instanceof NotAcceptableException) {
            message = route(request) + " cannot answer any type in Accept '" + header(request, "Accept") + "'";
        } else if (status == 400) {
            message = route(request) + ": bad request (" + web.getMessage() + ")";
        } else {
            message = route(request) + ": " + web.getMessage();
        }
        return Response.fromResponse(original).status(status).type(ErrorBody.MEDIA_TYPE)
                .entity(ErrorBody.of(status, message, null)).build();
    }

    private static String malformedBody(JsonProcessingException json, HttpServerRequest request) {
        String at = json instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()
                ? " at " + fieldPath(mapping) : "";
        // Jackson's message without its source location (which would quote the body).
        String why = json.getOriginalMessage().replaceFirst(" \\(start marker at \\[Source: .*$", "");
        return "the body of " + route(request) + " is not the JSON it takes" + at + ": " + why;
    }

    /** Where in the body, as {@code "keys"[1]}. */
    private static String fieldPath(JsonMappingException mapping) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference step : mapping.getPath()) {
            path.append(step.getFieldName() != null ? "\"" + step.getFieldName() + "\"" : "[" + step.getIndex() + "]");
        }
        return path.toString();
    }

    private static String route(HttpServerRequest request) {
        return method(request) + " " + path(request);
    }

    private static String method(HttpServerRequest request) {
        return request == null ? "?" : request.method().name();
    }

    private static String path(HttpServerRequest request) {
        return request == null ? "?" : request.path();
    }

    private static String header(HttpServerRequest request, String name) {
        String value = request == null ? null : request.getHeader(name);
        return value == null ? "" : value;
    }
}
