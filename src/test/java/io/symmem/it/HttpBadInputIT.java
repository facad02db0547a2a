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
 * TCP) of a real two-rank world: every error comes with its status and the one problem body
 * ({@code application/problem+json}: type, title, status, detail, error, and key where one key is
 * concerned). The routes come from the running service's OpenAPI document, and every one of them must
 * have cases here. Timeouts of group collectives are GroupsIT's (a timed-out collective puts its
 * group's members out of step, which cases run one after another here must not do).
 */
class HttpBadInputIT {
    private static final String JSON = "application/json";
    private static final String PROBLEM = "application/problem+json";
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
                new Case(NO_ROUTE, "a path nothing serves", get("/v1/nothing-here"), 404, "no route GET /v1/nothing-here", null),
                new Case("GET /v1/world", "a method it does not serve", http("DELETE", "/v1/world", Map.of(), null),
                        405, "method DELETE is not allowed on /v1/world", null),
                new Case("GET /v1/events", "a Last-Event-ID that is no number", http("GET", "/v1/events", Map.of("Last-Event-ID", "x"), null),
                        400, "Last-Event-ID 'x' is not an event number", null),
                new Case("GET /v1/events", "a negative ?since=", get("/v1/events?since=-1"), 400, "since '-1' is not an event number", null),
                new Case("GET /v1/groups", "a method it does not serve", http("DELETE", "/v1/groups", Map.of(), null),
                        405, "method DELETE is not allowed on /v1/groups", null),
                new Case("POST /v1/groups", "a body cut short", json("POST", "/v1/groups", "{"), 400, "is not the JSON it takes", null),
                new Case("POST /v1/groups", "no name", json("POST", "/v1/groups", "{\"ranks\":[0,1]}"), 400, "\"name\" is missing", null),
                new Case("POST /v1/groups", "ranks that are not numbers", json("POST", "/v1/groups", "{\"name\":\"g\",\"ranks\":[\"a\"]}"),
                        400, "is not the JSON it takes at \"ranks\"[0]", null),
                new Case("POST /v1/groups", "a name with '/'", json("POST", "/v1/groups", "{\"name\":\"a/b\",\"ranks\":[0,1]}"),
                        400, "group name 'a/b' is not allowed", null),
                new Case("POST /v1/groups", "the world's name", json("POST", "/v1/groups", "{\"name\":\"world\",\"ranks\":[0,1]}"),
                        400, "is taken by the group of every rank", null),
                new Case("POST /v1/groups", "a rank outside the world", json("POST", "/v1/groups", "{\"name\":\"g\",\"ranks\":[0,1,7]}"),
                        400, "rank 7 is outside the world of 2 ranks", null),
                new Case("POST /v1/groups", "a rank twice", json("POST", "/v1/groups", "{\"name\":\"g\",\"ranks\":[1,1,0]}"),
                        400, "rank 1 is listed twice", null),
                new Case("POST /v1/groups", "a timeout that is no duration", json("POST", "/v1/groups?timeout=soon", "{\"name\":\"g\",\"ranks\":[0,1]}"),
                        400, "?timeout=soon: 'soon' is not a duration", null),
                new Case("GET /v1/groups/{name}", "a group that is not there", get("/v1/groups/nope"), 404, "no group 'nope' on rank", null),
                new Case("POST /v1/groups/{name}/barrier", "a group that is not there", json("POST", "/v1/groups/nope/barrier", ""),
                        404, "no group 'nope'", null),
                new Case("POST /v1/groups/{name}/barrier", "a timeout that is no duration", json("POST", "/v1/groups/world/barrier?timeout=1x", ""),
                        400, "?timeout=1x", null),
                new Case("POST /v1/groups/{name}/broadcast", "no root", json("POST", "/v1/groups/world/broadcast", "{\"value\":1}"),
                        400, "broadcast needs ?root=", null),
                new Case("POST /v1/groups/{name}/broadcast", "a root outside the group",
                        json("POST", "/v1/groups/world/broadcast?root=5", "{\"value\":1}"), 400, "root 5 is not in group 'world'", null),
                new Case("POST /v1/groups/{name}/broadcast", "a root that is no number",
                        json("POST", "/v1/groups/world/broadcast?root=zero", "{\"value\":1}"), 400, "?root=zero is not a rank", null),
                new Case("POST /v1/groups/{name}/all-gather", "no value", json("POST", "/v1/groups/world/all-gather", "{\"v\":1}"),
                        400, "has no \"value\"", null),
                new Case("POST /v1/groups/{name}/all-gather", "a body that is not JSON", json("POST", "/v1/groups/world/all-gather", "value=1"),
                        400, "the body of all-gather is not JSON", null),
                new Case("POST /v1/groups/{name}/all-reduce", "an unknown dtype",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int8\",\"op\":\"sum\",\"values\":[1]}"),
                        400, "dtype 'int8' is unknown", null),
                new Case("POST /v1/groups/{name}/all-reduce", "an unknown op",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int64\",\"op\":\"xor\",\"values\":[1]}"),
                        400, "op 'xor' is unknown", null),
                new Case("POST /v1/groups/{name}/all-reduce", "avg of integers",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int32\",\"op\":\"avg\",\"values\":[1]}"),
                        400, "op avg needs dtype float32 or float64", null),
                new Case("POST /v1/groups/{name}/all-reduce", "a value that is no number",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"float64\",\"op\":\"sum\",\"values\":[1,\"2\"]}"),
                        400, "\"values\"[1] is \"2\", not a number", null),
                new Case("POST /v1/groups/{name}/all-reduce", "a fraction for int32",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int32\",\"op\":\"max\",\"values\":[1.5]}"),
                        400, "\"values\"[0] = 1.5 is not an integer of int32", null),
                new Case("POST /v1/groups/{name}/all-reduce", "an int32 out of range",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int32\",\"op\":\"max\",\"values\":[3000000000]}"),
                        400, "is outside int32", null),
                new Case("POST /v1/groups/{name}/all-reduce", "too many values",
                        json("POST", "/v1/groups/world/all-reduce", "{\"dtype\":\"int32\",\"op\":\"max\",\"values\":["
                                + "0,".repeat(70_000) + "0]}"), 413, "at most 65536 go through the control plane", null),
                new Case("GET /v1/groups/{name}/nccl-unique-id", "a group that is not there", get("/v1/groups/nope/nccl-unique-id"),
                        404, "no group 'nope'", null),
                new Case("GET /v1/groups/{name}/nccl-unique-id", "a timeout that is no duration",
                        get("/v1/groups/world/nccl-unique-id?timeout=-5s"), 400, "?timeout=-5s", null),
                new Case("GET /v1/groups/{name}/nvshmem-unique-id", "a group that is not there", get("/v1/groups/nope/nvshmem-unique-id"),
                        404, "no group 'nope'", null),
                new Case("GET /v1/groups/{name}/nvshmem-unique-id", "a timeout that is no duration",
                        get("/v1/groups/world/nvshmem-unique-id?timeout=later"), 400, "?timeout=later", null));
    }

    static Stream<Arguments> casesOnEveryRank() {
        return Stream.of(0, 1).flatMap(rank -> cases().stream().map(c -> Arguments.of(rank, c)));
    }

    @ParameterizedTest(name = "rank {0}: {1}")
    @MethodSource("casesOnEveryRank")
    void answersWithItsStatusAndTheErrorBody(int rank, Case c) throws Exception {
        RawHttp.Reply reply = RawHttp.exchange(world.port(rank), c.request());
        assertThat(reply.status()).as("status of %s on rank %d; body %s", c, rank, reply.body()).isEqualTo(c.status());
        assertThat(reply.header("Content-Type")).as("Content-Type of %s", c).startsWith(PROBLEM);
        JsonNode body = TwoRankWorld.json(reply.body());
        List<String> fields = new ArrayList<>();
        body.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).as("fields of %s", reply.body()).startsWith("type", "title", "status", "detail", "error")
                .isSubsetOf("type", "title", "status", "detail", "error", "key", "ranks");
        assertThat(body.get("status").asInt()).isEqualTo(c.status());
        assertThat(body.get("detail").asText()).contains(c.errorContains()).isEqualTo(body.get("error").asText());
        if (c.key() == null) {
            assertThat(body.has("key")).as("key of %s", reply.body()).isFalse();
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
