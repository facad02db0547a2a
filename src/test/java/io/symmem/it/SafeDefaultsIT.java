package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sidecar's safe defaults on a real rank (`serve`, world 1): the API on loopback only, health and
 * metrics on the management port (and not on the API's), with SYMMEM_API_TOKEN every /v1 route that the
 * OpenAPI document lists refused without the token or with a wrong one, a body over
 * SYMMEM_HTTP_MAX_BODY_BYTES refused while the next request is served, and the token never shown.
 */
class SafeDefaultsIT {
    private static final String TOKEN = "s3cret-token-of-the-test_0123456789";
    private static RankProcess rank;
    private static int api;
    private static int management;

    @BeforeAll
    static void start() throws Exception {
        api = Ports.freeBlock(1);
        management = Ports.freeBlock(1);
        rank = RankProcess.start("safe-defaults", Map.of("WORLD_SIZE", "1", "RANK", "0", "MASTER_ADDR", "127.0.0.1",
                "MASTER_PORT", Integer.toString(Ports.free()), "SYMMEM_HTTP_PORT", Integer.toString(api),
                "SYMMEM_MANAGEMENT_PORT", Integer.toString(management), "SYMMEM_API_TOKEN", TOKEN,
                "SYMMEM_HTTP_MAX_BODY_BYTES", "4KiB"), "serve");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            try {
                if (RawHttp.exchange(management, "GET", "/q/health/ready", Map.of(), null).status() == 200) {
                    return;
                }
            } catch (IOException starting) {
                // not listening yet
            }
            assertThat(System.nanoTime()).as("rank ready; its output:%n%s", rank.output()).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stop() {
        if (rank != null) {
            rank.close();
        }
    }

    private static Map<String, String> bearer(String token) {
        return Map.of("Authorization", "Bearer " + token);
    }

    @Test
    void everyV1RouteNeedsTheTokenAndNothingElseDoes() throws Exception {
        RawHttp.Reply openapi = RawHttp.exchange(api, "GET", "/q/openapi?format=json", Map.of(), null);
        assertThat(openapi.status()).as("the API's description needs no token").isEqualTo(200);
        JsonNode paths = TwoRankWorld.json(openapi.body()).get("paths");
        List<String> routes = new ArrayList<>();
        paths.fieldNames().forEachRemaining(path -> paths.get(path).fieldNames().forEachRemaining(method -> {
            if (List.of("get", "put", "post", "delete").contains(method)) {
                routes.add(method.toUpperCase() + " " + path.replace("{name}", "world").replaceAll("\\{key[^}]*}", "k"));
            }
        }));
        assertThat(routes).hasSizeGreaterThan(15).allMatch(r -> r.contains(" /v1/"));
        for (String route : routes) {
            String method = route.substring(0, route.indexOf(' '));
            String path = route.substring(route.indexOf(' ') + 1);
            for (Map<String, String> headers : List.of(Map.<String, String>of(), bearer("wrong-token-0123456789abcdef"),
                    Map.of("Authorization", "Basic dXNlcjpwYXNz"))) {
                RawHttp.Reply reply = RawHttp.exchange(api, method, path, headers, method.equals("GET") ? null : "");
                assertThat(reply.status()).as("%s with %s: %s", route, headers, reply.body()).isEqualTo(401);
                assertThat(reply.header("WWW-Authenticate")).startsWith("Bearer");
                assertThat(reply.header("Content-Type")).startsWith("application/problem+json");
                assertThat(reply.body()).doesNotContain(TOKEN);
            }
        }
        assertThat(RawHttp.exchange(api, "GET", "/v1/info", bearer(TOKEN), null).status()).isEqualTo(200);
        assertThat(RawHttp.exchange(api, "GET", "/v1/world", bearer(TOKEN), null).status()).isEqualTo(200);
        assertThat(RawHttp.exchange(management, "GET", "/q/health/live", Map.of(), null).status()).isEqualTo(200);
        assertThat(RawHttp.exchange(management, "GET", "/q/metrics", Map.of(), null).status()).isEqualTo(200);
        assertThat(RawHttp.exchange(api, "GET", "/q/health/live", Map.of(), null).status()).as("health is not on the API's port")
                .isEqualTo(404);
        assertThat(RawHttp.exchange(api, "GET", "/q/swagger-ui/", Map.of(), null).status()).isEqualTo(200);
    }

    @Test
    void theOpenApiDocumentDescribesEveryRouteWithAnExample() throws Exception {
        JsonNode doc = TwoRankWorld.json(RawHttp.exchange(api, "GET", "/q/openapi?format=json", Map.of(), null).body());
        assertThat(doc.at("/components/securitySchemes/bearer/scheme").asText()).isEqualTo("bearer");
        JsonNode paths = doc.get("paths");
        List<String> without = new ArrayList<>();
        paths.fieldNames().forEachRemaining(path -> paths.get(path).fields().forEachRemaining(op -> {
            JsonNode operation = op.getValue();
            boolean example = !operation.findValues("examples").isEmpty() || !operation.findValues("example").isEmpty();
            if (!operation.has("summary") || !example) {
                without.add(op.getKey().toUpperCase() + " " + path);
            }
        }));
        assertThat(without).as("routes without a summary or an example").isEmpty();
    }

    @Test
    void theTokenIsNeverShown() throws Exception {
        RawHttp.Reply config = RawHttp.exchange(api, "GET", "/v1/config", bearer(TOKEN), null);
        assertThat(config.status()).isEqualTo(200);
        assertThat(config.body()).doesNotContain(TOKEN).contains("(set, " + TOKEN.length() + " characters)");
        assertThat(rank.output()).doesNotContain(TOKEN);
    }

    @Test
    void aBodyOverTheLimitIsRefusedAndTheNextRequestIsServed() throws Exception {
        Map<String, String> headers = new java.util.HashMap<>(bearer(TOKEN));
        headers.put("Content-Type", "application/octet-stream");
        RawHttp.Reply big = RawHttp.exchange(api, "PUT", "/v1/store/keys/big", headers, "x".repeat(8192));
        assertThat(big.status()).isEqualTo(413);
        assertThat(big.body()).contains("request body of 8192 bytes is larger than the 4096").contains("SYMMEM_HTTP_MAX_BODY_BYTES");
        assertThat(RawHttp.exchange(api, "PUT", "/v1/store/keys/small", headers, "x".repeat(4000)).status()).isEqualTo(204);
    }

    @Test
    void theApiListensOnLoopbackOnlyAndTheManagementPortEverywhere() throws Exception {
        Optional<InetAddress> outside = outsideAddress();
        if (outside.isEmpty()) {
            System.out.println("SafeDefaultsIT: SKIPPED the check from another address: this machine has no IPv4 address "
                    + "besides loopback");
            return;
        }
        assertThat(connects(outside.get(), api)).as("the API from %s", outside.get()).isFalse();
        assertThat(connects(outside.get(), management)).as("health and metrics from %s", outside.get()).isTrue();
    }

    private static Optional<InetAddress> outsideAddress() throws IOException {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nic.isUp() && !nic.isLoopback()) {
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
                        return Optional.of(a);
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static boolean connects(InetAddress address, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), 2000);
            return true;
        } catch (IOException refused) {
            return false;
        }
    }
}
