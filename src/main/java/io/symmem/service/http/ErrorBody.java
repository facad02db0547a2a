package io.symmem.service.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The body of every error of the /v1 routes, whichever layer answers it (a resource, the REST layer, or
 * the HTTP server's own checks): an RFC 9457 problem ({@code application/problem+json}) with
 * {@code status}, {@code title} (the status' phrase) and {@code detail} (what went wrong, naming the
 * variable, key, rank or size), plus members of symmem's own: {@code error} (the same text as detail,
 * kept for clients of the first API), {@code key} where one key is concerned (for a timed-out wait the
 * missing keys, comma-separated) and {@code ranks} where ranks are (the world ranks that did not come,
 * or that are gone).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ErrorBody(String type, String title, int status, String detail, String error, String key, List<Integer> ranks) {

    public static final String MEDIA_TYPE = "application/problem+json";

    public static ErrorBody of(int status, String message, String key) {
        return of(status, message, key, null);
    }

    public static ErrorBody of(int status, String message, String key, List<Integer> ranks) {
        return new ErrorBody("about:blank", HttpResponseStatus.valueOf(status).reasonPhrase(), status, message, message, key,
                ranks == null ? null : List.copyOf(ranks));
    }

    /** The same JSON, for handlers that write the response themselves (below the REST layer). */
    public String toJson() {
        JsonObject json = new JsonObject().put("type", type).put("title", title).put("status", status).put("detail", detail)
                .put("error", error);
        if (key != null) {
            json.put("key", key);
        }
        if (ranks != null) {
            json.put("ranks", new JsonArray(ranks));
        }
        return json.encode();
    }
}
