package io.symmem.service.http;

import io.vertx.core.json.JsonObject;

/**
 * The JSON body of every error of the /v1 routes, whichever layer answers it (a resource, the REST
 * layer, or the HTTP server's own checks): what went wrong and, where one key is concerned, the key
 * (null otherwise; for a timed-out wait the missing keys, comma-separated).
 */
public record ErrorBody(String error, String key) {

    /** The same JSON, for handlers that write the response themselves (below the REST layer). */
    public String toJson() {
        return new JsonObject().put("error", error).put("key", key).encode();
    }
}
