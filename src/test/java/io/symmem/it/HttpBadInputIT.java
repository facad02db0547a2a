package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input on every HTTP route, on rank 0 (which hosts the store) and on rank 1 (which reaches it over
 * TCP) of a real two-rank world: every error comes with its status and the one JSON error body
 * {@code {"error": "...", "key": ...}}. The routes come from the running service's OpenAPI document, and
 * every one of them must have cases here.
 */
class HttpBadInputIT {
    private static final String JSON = "application/json";
    private static final String BYTES = "application/octet-stream";
    /** Cases that no route serves. */
    private static final String NO_ROUTE = "(no route)";

    private static TwoRankWorld world;

    /** One bad request for a route: what to send and what must come back. */
    record Case(String route, String name, String request, int status, String errorContains, String key) {
        @Override
        public String toString() {
            return route + ": " + name;
        }
    }

    @BeforeAll
    static void startWorld() throws Exception {
        world = TwoRankWorld.start("bad-input");
        put(0, "text", "hello");
        put(0, "max", Long.toString(Long.MAX_VALUE));
    }

    @AfterAll
    static void stopWorld() {
        if (world != null) {
            world.close();
        }
    }

    private static void put(int rank, String key, String value) throws Exception {
        assertThat(RawHttp.exchange(world.port(rank), "PUT", "/v1/store/keys/" + key, Map.of("Content-Type", BYTES), value).status())
                .isEqualTo(204);
    }

    private static String http(String method, String target, Map<String, String> headers, String body) {
        return RawHttp.request(method, target, "HTTP/1.1", headers, body);
    }

    private static String get(String target) {
        return http("GET", target, Map.of(), null);
    }

    private static String json(String method, String target, String body) {
        return http(method, target, Map.of("Content-Type", JSON), body);
    }

    static List<Case> cases() {
        String longKey = "k".repeat(5000);
        return List.of(
                new Case("GET /v1/info", "an HTTP version it does not speak",
                        RawHttp.request("GET", "/v1/info", "HTTP/9.9", Map.of(), null), 505, "HTTP version not supported", null),
                new Case("GET /v1/info", "an Accept it cannot answer", http("GET", "/v1/info", Map.of("Accept", "text/html"), null),
                        406, "cannot answer any type in Accept 'text/html'", null),
                new Case("GET /v1/info", "a method it does not serve", http("PUT", "/v1/info", Map.of("Content-Type", JSON), "{}"),
                        405, "method PUT is not allowed on /v1/info", null),
                new Case("GET /v1/info", "no Host header", "GET /v1/info HTTP/1.1\r\nConnection: close\r\n\r\n",
                        400, "the 'Host' header is required", null),
                new Case("GET /v1/config", "a bad %-escape in the query", get("/v1/config?x=%zz"), 400, "malformed escape pair", null),
                new Case("GET /v1/config", "headers over the limit", http("GET", "/v1/config", Map.of("X-Padding", "p".repeat(30_000)), null),
                        431, "request headers of", null),
                new Case("GET /v1/topology", "a URI over the limit", get("/v1/topology?padding=" + "p".repeat(20_000)),
                        414, "request URI of", null),
                new Case("GET /v1/topology", "a method it does not serve", http("DELETE", "/v1/topology", Map.of(), null),
                        405, "method DELETE is not allowed", null),
                new Case("GET /v1/store/keys/{key}", "a key that is not there", get("/v1/store/keys/no-such-key"),
                        404, "no key 'no-such-key'", "no-such-key"),
                new Case("GET /v1/store/keys/{key}", "a wait that is no duration", get("/v1/store/keys/k?wait=soon"),
                        400, "wait: 'soon' is not a duration", null),
                new Case("GET /v1/store/keys/{key}", "a bad %-escape in the key", get("/v1/store/keys/a%zzb"), 400, "malformed escape pair", null),
                new Case("GET /v1/store/keys/{key}", "a long poll that passes", get("/v1/store/keys/never-set?wait=300ms"),
                        504, "timed out after 300 ms", "never-set"),
                new Case("PUT /v1/store/keys/{key}", "a body that is not bytes",
                        http("PUT", "/v1/store/keys/k", Map.of("Content-Type", "text/plain"), "x"),
                        415, "does not take a body of Content-Type 'text/plain'", null),
                new Case("PUT /v1/store/keys/{key}", "a key over the store's limit",
                        http("PUT", "/v1/store/keys/" + longKey, Map.of("Content-Type", BYTES), "x"), 413, "exceeds the store's limit", null),
                new Case("PUT /v1/store/keys/{key}", "a body over the HTTP limit",
                        http("PUT", "/v1/store/keys/k", Map.of("Content-Type", BYTES, "Content-Length", "20000000"), null),
                        413, "request body of 20000000 bytes", null),
                new Case("DELETE /v1/store/keys/{key}", "a key that is not there", http("DELETE", "/v1/store/keys/no-such-key", Map.of(), null),
                        404, "no key 'no-such-key'", "no-such-key"),
                new Case("POST /v1/store/keys/{key}/add", "a delta that is no integer", json("POST", "/v1/store/keys/n/add?delta=abc", ""),
                        400, "delta 'abc' is not a signed 64-bit integer", "n"),
                new Case("POST /v1/store/keys/{key}/add", "a delta beyond 64 bits",
                        json("POST", "/v1/store/keys/n/add?delta=9223372036854775808", ""), 400, "is not a signed 64-bit integer", "n"),
                new Case("POST /v1/store/keys/{key}/add", "a value that is no integer", json("POST", "/v1/store/keys/text/add", ""),
                        400, "key 'text' holds 'hello', not a decimal integer", "text"),
                new Case("POST /v1/store/keys/{key}/add", "a sum beyond 64 bits", json("POST", "/v1/store/keys/max/add?delta=1", ""),
                        400, "overflows the signed 64-bit range", "max"),
                new Case("POST /v1/store/keys/{key}/compare-set", "a body that is not JSON", json("POST", "/v1/store/keys/c/compare-set", "{"),
                        400, "is not the JSON it takes", null),
                new Case("POST /v1/store/keys/{key}/compare-set", "no body", json("POST", "/v1/store/keys/c/compare-set", ""),
                        400, "compare-set needs a JSON body", "c"),
                new Case("POST /v1/store/keys/{key}/compare-set", "expected that is not base64",
                        json("POST", "/v1/store/keys/c/compare-set", "{\"expected\":\"***\",\"desired\":\"eA==\"}"),
                        400, "\"expected\" is not base64", "c"),
                new Case("POST /v1/store/keys/{key}/compare-set", "a body that is not JSON by type",
                        http("POST", "/v1/store/keys/c/compare-set", Map.of("Content-Type", "text/plain"), "x"),
                        415, "does not take a body of Content-Type 'text/plain'", null),
                new Case("POST /v1/store/wait", "a body cut short", json("POST", "/v1/store/wait", "{"), 400, "is not the JSON it takes", null),
                new Case("POST /v1/store/wait", "a form instead of JSON", json("POST", "/v1/store/wait", "keys=zz"),
                        400, "Unrecognized token 'keys'", null),
                new Case("POST /v1/store/wait", "keys that are not a list", json("POST", "/v1/store/wait", "{\"keys\":\"a\"}"),
                        400, "is not the JSON it takes at \"keys\"", null),
                new Case("POST /v1/store/wait", "no keys", json("POST", "/v1/store/wait", "{\"keys\":[]}"), 400, "wait needs a JSON body", null),
                new Case("POST /v1/store/wait", "a timeout that is no duration",
                        json("POST", "/v1/store/wait", "{\"keys\":[\"a\"],\"timeout\":\"soon\"}"), 400, "timeout: 'soon' is not a duration", null),
                new Case("POST /v1/store/wait", "a wait that passes",
                        json("POST", "/v1/store/wait", "{\"keys\":[\"never-set\"],\"timeout\":\"300ms\"}"), 504, "timed out after 300 ms", "never-set"),
                new Case("GET /v1/store/keys", "a bad %-escape in the prefix", get("/v1/store/keys?prefix=%zz"), 400, "malformed escape pair", null),
                new Case("GET /v1/store/keys", "a method it does not serve", http("PUT", "/v1/store/keys", Map.of("Content-Type", BYTES), "x"),
                        405, "method PUT is not allowed on /v1/store/keys", null),
                new Case("GET /v1/store/stats", "a method it does not serve", http("DELETE", "/v1/store/stats", Map.of(), null),
                        405, "method DELETE is not allowed on /v1/store/stats", null),
                new Case(NO_ROUTE, "a path nothing serves", get("/v1/nothing-here"), 404, "no route GET /v1/nothing-here", null));
    }

    static Stream<Arguments> casesOnEveryRank() {
        return Stream.of(0, 1).flatMap(rank -> cases().stream().map(c -> Arguments.of(rank, c)));
    }

    @ParameterizedTest(name = "rank {0}: {1}")
    @MethodSource("casesOnEveryRank")
    void answersWithItsStatusAndTheErrorBody(int rank, Case c) throws Exception {
        RawHttp.Reply reply = RawHttp.exchange(world.port(rank), c.request());
        assertThat(reply.status()).as("status of %s on rank %d; body %s", c, rank, reply.body()).isEqualTo(c.status());
        assertThat(reply.header("Content-Type")).as("Content-Type of %s", c).startsWith(JSON);
        JsonNode body = TwoRankWorld.json(reply.body());
        List<String> fields = new ArrayList<>();
        body.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).as("fields of %s", reply.body()).containsExactly("error", "key");
        assertThat(body.get("error").asText()).contains(c.errorContains());
        if (c.key() == null) {
            assertThat(body.get("key").isNull()).as("key of %s", reply.body()).isTrue();
        } else {
            assertThat(body.get("key").asText()).isEqualTo(c.key());
        }
    }

    @Test
    void everyRouteTheServiceServesHasBadInputCases() throws Exception {
        RawHttp.Reply openapi = RawHttp.exchange(world.port(0), "GET", "/q/openapi?format=json", Map.of(), null);
        assertThat(openapi.status()).isEqualTo(200);
        Set<String> served = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = TwoRankWorld.json(openapi.body()).get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            path.getValue().fieldNames().forEachRemaining(method -> {
                if (Set.of("get", "put", "post", "delete", "patch", "head", "options").contains(method)) {
                    served.add(method.toUpperCase() + " " + path.getKey());
                }
            });
        }
        Set<String> covered = new TreeSet<>();
        cases().forEach(c -> covered.add(c.route()));
        covered.remove(NO_ROUTE);
        assertThat(served).as("routes served (OpenAPI)").isNotEmpty();
        assertThat(covered).as("routes with bad-input cases").isEqualTo(served);
    }
}
