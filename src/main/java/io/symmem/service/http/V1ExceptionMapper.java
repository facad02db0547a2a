package io.symmem.service.http;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.core.Response;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Every failure of a /v1 resource, its own or the REST layer's (no such route or method, media type not
 * served, a body that is not JSON), answered in the one error format ({@link ErrorBody}). Registered for
 * the REST layer's exception types by name as well, so that Quarkus's built-in mappers for them (which
 * answer without a body) are not chosen over it.
 */
public class V1ExceptionMapper {

    @ServerExceptionMapper({Throwable.class, jakarta.ws.rs.WebApplicationException.class,
            com.fasterxml.jackson.core.JsonProcessingException.class,
            com.fasterxml.jackson.databind.exc.MismatchedInputException.class})
    public Response map(Throwable failure, HttpServerRequest request) {
        return ErrorResponses.toResponse(failure, request);
    }
}
