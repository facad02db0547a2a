package io.symmem.service.http;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.symmem.config.SymmemConfig;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * With SYMMEM_API_TOKEN set, every /v1 route needs {@code Authorization: Bearer <token>}; anything else
 * gets a 401 problem with {@code WWW-Authenticate: Bearer} (RFC 6750) before any route runs. Health and
 * metrics (the management port), the status page and the API's description are not /v1 and stay open:
 * they hold nothing a token protects. The comparison takes the same time whatever the token sent.
 */
@ApplicationScoped
public class ApiToken {
    /** After RequestAdmission (a request it refuses is never looked at here), before every route. */
    private static final int PRIORITY = Integer.MAX_VALUE - 200;
    private static final String REALM = "Bearer realm=\"symmem\"";

    @Inject
    SymmemConfig config;

    void register(@Observes Filters filters) {
        config.api().token().ifPresent(token -> {
            byte[] expected = token.getBytes(StandardCharsets.US_ASCII);
            filters.register(context -> check(context, expected), PRIORITY);
        });
    }

    private static void check(RoutingContext context, byte[] expected) {
        String path = context.request().path();
        if (path == null || !(path.equals("/v1") || path.startsWith("/v1/"))) {
            context.next();
            return;
        }
        String header = context.request().getHeader("Authorization");
        String problem;
        if (header == null) {
            problem = "this route needs 'Authorization: Bearer <token>' (SYMMEM_API_TOKEN is set on this rank)";
        } else if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            problem = "the Authorization header must be 'Bearer <token>'";
        } else if (!MessageDigest.isEqual(expected, header.substring(7).trim().getBytes(StandardCharsets.US_ASCII))) {
            problem = "the bearer token is not this rank's SYMMEM_API_TOKEN";
        } else {
            context.next();
            return;
        }
        context.response().setStatusCode(401).putHeader("Content-Type", ErrorBody.MEDIA_TYPE)
                .putHeader("WWW-Authenticate", header == null ? REALM : REALM + ", error=\"invalid_token\"")
                .end(ErrorBody.of(401, problem, null).toJson());
    }
}
