package io.symmem.service.http;

import io.quarkus.vertx.http.runtime.RouteConstants;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.jboss.logging.Logger;

/**
 * The /v1 errors that never reach a resource, answered in the one error format ({@link ErrorBody})
 * instead of Vert.x's or Quarkus's bodies (empty, or an HTML page): a path that no route serves (404),
 * and failures of the HTTP layer in front of the REST layer (e.g. an HTTP/1.1 request without a Host
 * header: 400). Other paths (/q/...) keep Quarkus's handling.
 */
@ApplicationScoped
public class V1RouteFallbacks {

    private static final Logger LOG = Logger.getLogger(V1RouteFallbacks.class);
    private static final String V1 = "/v1/";

    void register(@Observes Router router) {
        // Failure handlers run in route order: this one before Quarkus's own (which writes HTML or nothing).
        router.route().order(RouteConstants.ROUTE_ORDER_HEADERS).failureHandler(this::failed);
        // Last: the REST layer (order 20500 in Quarkus 3.27) passes on the /v1 paths it has no resource for.
        router.route("/v1/*").order(Integer.MAX_VALUE - 1).handler(this::noRoute);
    }

    private void noRoute(RoutingContext context) {
        RequestAdmission.refuse(context, 404, "no route " + context.request().method() + " " + context.request().path());
    }

    private void failed(RoutingContext context) {
        if (!answer(context)) {
            context.next(); // not ours: on to Quarkus's failure handler
        }
    }

    /** Answers the failure of a /v1 request; false (nothing written) for other paths. */
    private boolean answer(RoutingContext context) {
        String path = context.request().path();
        if (path == null || !path.startsWith(V1) || context.response().headWritten()) {
            return false;
        }
        int status = context.statusCode();
        String message;
        if (status == -1 || status >= 500) {
            status = 500;
            LOG.errorf(context.failure(), "%s %s failed", context.request().method(), path);
            message = context.request().method() + " " + path + " failed: " + context.failure();
        } else if (status == 413) {
            message = "request body is larger than this server takes (SYMMEM_HTTP_MAX_BODY_BYTES)";
        } else {
            // Vert.x says why (e.g. "For HTTP/1.x requests, the 'Host' header is required").
            Throwable why = context.failure();
            message = context.request().method() + " " + path + ": "
                    + (why != null && why.getMessage() != null ? why.getMessage() : "HTTP " + status);
        }
        RequestAdmission.refuse(context, status, message);
        return true;
    }
}
