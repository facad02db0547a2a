package io.symmem.service.http;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import io.quarkus.runtime.configuration.MemorySize;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refuses, before any route runs, requests the service does not take, with an {@link ErrorBody} like
 * every other error: an HTTP version other than 1.0, 1.1 or 2 (505: Vert.x parses any "HTTP/x.y" and
 * would answer "HTTP/9.9 200 OK"), a request URI over {@link #MAX_URI_LENGTH} (414), a URI that does not
 * parse, such as one with a bad %-escape (400; Quarkus's outermost handler makes the same check and answers
 * without a body: {@link io.symmem.cli.SymmemMain} turns that one off for ranks), headers over
 * {@link #MAX_HEADER_BYTES} (431) and a Content-Length over {@code quarkus.http.limits.max-body-size} (413;
 * Quarkus's own check, which this one runs before, answers without a body).
 *
 * <p>The HTTP codec's own limits (application.properties) are set well above these, so that requests in
 * between reach this filter and get the JSON answer; only larger ones still get the codec's bare 414/431.
 */
@ApplicationScoped
public class RequestAdmission {

    /** Longest request URI served: a key of 4096 bytes, every byte %-escaped, with room to spare. */
    public static final int MAX_URI_LENGTH = 16384;
    /** Most header bytes served (names, values, separators): Quarkus's default limit. */
    public static final int MAX_HEADER_BYTES = 20480;
    /** Runs first among the filters, before any route that matches paths (which would decode a bad URI). */
    private static final int PRIORITY = Integer.MAX_VALUE - 100;

    @ConfigProperty(name = "quarkus.http.limits.max-body-size")
    Optional<MemorySize> maxBodySize;

    void register(@Observes Filters filters) {
        filters.register(this::admit, PRIORITY);
    }

    void admit(RoutingContext context) {
        HttpServerRequest request = context.request();
        if (request.version() == null) {
            // Vert.x reports only the versions it knows; any other "HTTP/x.y" arrives without one.
            // Nothing more is read in a version it does not know.
            refuseAndClose(context, 505, "HTTP version not supported: this server speaks HTTP/1.0, HTTP/1.1 and HTTP/2");
            return;
        }
        int uriLength = request.uri().length();
        if (uriLength > MAX_URI_LENGTH) {
            refuse(context, 414, "request URI of " + uriLength + " characters is longer than the " + MAX_URI_LENGTH + " served");
            return;
        }
        try {
            new URI(request.uri());
        } catch (URISyntaxException e) {
            String hint = e.getReason().contains("escape") ? ": '%' must be followed by two hex digits (write %25 for '%' itself)" : "";
            refuse(context, 400, "request URI is not valid: " + e.getReason().toLowerCase(Locale.ROOT) + " at character " + e.getIndex() + hint);
            return;
        }
        int headerBytes = 0;
        for (Map.Entry<String, String> header : request.headers()) {
            headerBytes += header.getKey().length() + header.getValue().length() + 4; // ": " and CRLF
        }
        if (headerBytes > MAX_HEADER_BYTES) {
            refuse(context, 431, "request headers of " + headerBytes + " bytes are more than the " + MAX_HEADER_BYTES + " served");
            return;
        }
        long bodyBytes = contentLength(request);
        if (maxBodySize.isPresent() && bodyBytes > maxBodySize.get().asLongValue()) {
            // The body is not read: the connection cannot carry another request.
            refuseAndClose(context, 413, "request body of " + bodyBytes + " bytes is larger than the " + maxBodySize.get().asLongValue()
                    + " this server takes (SYMMEM_HTTP_MAX_BODY_BYTES)");
            return;
        }
        context.next();
    }

    private static long contentLength(HttpServerRequest request) {
        String header = request.getHeader("Content-Length");
        try {
            return header == null ? -1 : Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            return -1; // the HTTP codec refuses it
        }
    }

    static void refuse(RoutingContext context, int status, String message) {
        context.response().setStatusCode(status).putHeader("Content-Type", ErrorBody.MEDIA_TYPE)
                .end(ErrorBody.of(status, message, null).toJson());
    }

    /** As {@link #refuse}, then closes the connection once the answer is written (Vert.x would wait for the body). */
    private static void refuseAndClose(RoutingContext context, int status, String message) {
        context.response().setStatusCode(status).putHeader("Content-Type", ErrorBody.MEDIA_TYPE).putHeader("Connection", "close")
                .end(ErrorBody.of(status, message, null).toJson()).onComplete(written -> context.request().connection().close());
    }
}
