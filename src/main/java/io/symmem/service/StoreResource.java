package io.symmem.service;

import io.smallrye.mutiny.Uni;
import io.symmem.service.store.CheckedAdd;
import io.symmem.service.store.HttpWaitLimit;
import io.symmem.service.store.StoreDtos;
import io.symmem.service.store.StoreHttpException;
import io.symmem.store.Store;
import io.symmem.store.server.StoreServer;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * The rendezvous store over HTTP, for tools and people: every route goes through the rank's
 * {@link io.symmem.store.EventBusStore}, so it reads and writes the same keys as the ranks and as
 * PyTorch clients of the store. Values are raw bytes (application/octet-stream); keys may contain
 * '/'. Nothing here blocks: every method returns a Uni. A caller that goes away cancels its Uni (Quarkus
 * REST does so when the connection closes), which withdraws its wait or request from the store. Status
 * codes: see {@link io.symmem.service.http.ErrorResponses} and docs/store.md.
 */
@Path("/v1/store")
@Tag(name = "store", description = "The rendezvous store: the same keys as the ranks and TCPStore clients")
public class StoreResource {

    @Inject
    RankRuntime runtime;
    @Inject
    HttpWaitLimit waits;

    /** The value of a key: 404 if absent, or with {@code ?wait=5s} a long poll that answers 504 when it passes. */
    @Operation(summary = "The value of a key: 404 if absent; ?wait=5s waits for it (504 when that passes)")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_OCTET_STREAM, examples = @ExampleObject(name = "bytes",
            value = "hello")))
    @GET
    @Path("/keys/{key: .+}")
    @Produces(MediaType.APPLICATION_OCTET_STREAM)
    public Uni<byte[]> get(@PathParam("key") String key, @QueryParam("wait") String wait) {
        Store store = store();
        if (wait != null) {
            Duration timeout = parseDuration(wait, "wait");
            return waits.run(runtime.config().rank(), () -> store.get(key, timeout));
        }
        return store.check(List.of(key)).flatMap(present -> {
            if (!present) {
                throw new StoreHttpException(404, "no key '" + key + "' in store " + store.describe(), key);
            }
            // Present a moment ago; a concurrent delete makes this wait, bounded by the store deadline.
            return store.get(key, runtime.config().timeout().store());
        });
    }

    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_OCTET_STREAM, examples = @ExampleObject(name = "bytes", value = "hello")))
    @Operation(summary = "Sets a key to the body's bytes")
    @APIResponse(responseCode = "204", description = "Set: the store has the value, a GET on any rank finds it")
    @PUT
    @Path("/keys/{key: .+}")
    @Consumes(MediaType.APPLICATION_OCTET_STREAM)
    public Uni<Response> set(@PathParam("key") String key, byte[] value) {
        Store store = store();
        // A set has no answer of its own: a PING on the same connection proves the server applied it, so
        // that a caller told 204 can read the key on any rank at once (docs/store.md, order across
        // connections). One round trip, small beside an HTTP request's.
        return store.set(key, value == null ? new byte[0] : value).chain(store::ping).map(ok -> Response.noContent().build());
    }

    /** 204 when the key was deleted, 404 when there was none. */
    @Operation(summary = "Deletes a key: 204, or 404 when there was none")
    @APIResponse(responseCode = "204", description = "Deleted")
    @APIResponse(responseCode = "404", content = @Content(mediaType = "application/problem+json", examples = @ExampleObject(name = "absent",
            value = "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"no key 'k' in store 127.0.0.1:29500\","
                    + "\"error\":\"no key 'k' in store 127.0.0.1:29500\",\"key\":\"k\"}")))
    @DELETE
    @Path("/keys/{key: .+}")
    public Uni<Response> delete(@PathParam("key") String key) {
        Store store = store();
        return store.delete(key).map(existed -> {
            if (!existed) {
                throw new StoreHttpException(404, "no key '" + key + "' in store " + store.describe(), key);
            }
            return Response.noContent().build();
        });
    }

    /**
     * Adds {@code delta} (default 1) to the integer under the key (absent = 0); answers the new value.
     * 400 if the key holds no integer or the sum would leave the signed 64-bit range (see {@link CheckedAdd}).
     */
    @Operation(summary = "Adds ?delta= (default 1) to the integer under the key; the new value")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "after two adds",
            value = "{\"value\":2}")))
    @POST
    @Path("/keys/{key: .+}/add")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<StoreDtos.AddResult> add(@PathParam("key") String key, @QueryParam("delta") @DefaultValue("1") String delta) {
        long amount;
        try {
            amount = Long.parseLong(delta.trim());
        } catch (NumberFormatException e) {
            throw new StoreHttpException(400, "delta '" + delta + "' is not a signed 64-bit integer", key);
        }
        return CheckedAdd.add(store(), key, amount).map(StoreDtos.AddResult::new);
    }

    /** c10d compare_set with base64 bytes; answers the value afterwards and whether it now holds {@code desired}. */
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "set if absent", value = "{\"expected\":\"\",\"desired\":\"aGVsbG8=\"}")))
    @Operation(summary = "Compare-and-set with base64 bytes: the value afterwards and whether it holds desired")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "swapped",
            value = "{\"value\":\"aGVsbG8=\",\"swapped\":true}")))
    @POST
    @Path("/keys/{key: .+}/compare-set")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<StoreDtos.CompareSetResult> compareSet(@PathParam("key") String key, StoreDtos.CompareSetRequest request) {
        if (request == null || request.desired() == null) {
            throw new StoreHttpException(400, "compare-set needs a JSON body {\"expected\": base64, \"desired\": base64}", key);
        }
        byte[] expected = base64(request.expected() == null ? "" : request.expected(), "expected", key);
        byte[] desired = base64(request.desired(), "desired", key);
        return store().compareSet(key, expected, desired).map(value ->
                new StoreDtos.CompareSetResult(Base64.getEncoder().encodeToString(value), Arrays.equals(value, desired)));
    }

    /** Waits for every key; 200 with the keys, or 504 naming the keys still missing. */
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two keys", value = "{\"keys\":[\"a\",\"b\"],\"timeout\":\"5s\"}")))
    @Operation(summary = "Waits until every key is set: 200, or 504 naming the keys still missing")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "both set",
            value = "{\"keys\":[\"a\",\"b\"]}")))
    @POST
    @Path("/wait")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<StoreDtos.WaitResult> await(StoreDtos.WaitRequest request) {
        if (request == null || request.keys() == null || request.keys().isEmpty() || request.keys().contains(null)) {
            throw new StoreHttpException(400, "wait needs a JSON body {\"keys\": [\"k\", ...], \"timeout\": \"5s\"}", null);
        }
        Duration timeout = request.timeout() == null ? runtime.config().timeout().store() : parseDuration(request.timeout(), "timeout");
        List<String> keys = List.copyOf(request.keys());
        Store store = store();
        return waits.run(runtime.config().rank(), () -> store.await(keys, timeout)).map(ok -> new StoreDtos.WaitResult(keys));
    }

    /** Keys holding a value (queues not listed), sorted; with {@code ?prefix=p} only those starting with p. */
    @Operation(summary = "Keys holding a value, sorted; ?prefix= keeps those starting with it")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two keys",
            value = "{\"keys\":[\"a\",\"b\"]}")))
    @GET
    @Path("/keys")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<StoreDtos.KeyList> list(@QueryParam("prefix") @DefaultValue("") String prefix) {
        return store().listKeys().map(all -> {
            List<String> keys = new ArrayList<>();
            for (String key : all) {
                if (key.startsWith(prefix)) {
                    keys.add(key);
                }
            }
            keys.sort(null);
            return new StoreDtos.KeyList(keys);
        });
    }

    /** Key count from any rank; connections and operations served per type from the rank that hosts the store. */
    @Operation(summary = "Key count; on the rank that hosts the store also connections and requests served by type")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "rank 1",
            value = "{\"store\":\"127.0.0.1:29500\",\"rank\":1,\"hostsStore\":false,\"keys\":13}")))
    @GET
    @Path("/stats")
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<StoreDtos.Stats> stats() {
        Store store = store();
        StoreServer server = runtime.storeServer();
        int rank = runtime.config().rank();
        if (server == null) {
            return store.numKeys().map(keys -> new StoreDtos.Stats(store.describe(), rank, false, keys,
                    null, null, null, null, null));
        }
        return server.stats().map(s -> new StoreDtos.Stats(store.describe(), rank, true, s.keys(), s.queues(),
                s.openConnections(), s.connectionsAccepted(), s.pendingWaits(), s.opsServed()));
    }

    private Store store() {
        Store store = runtime.store();
        if (store == null) {
            throw new StoreHttpException(503, "rank " + runtime.config().rank() + " has not reached the store "
                    + runtime.storeAddress() + " (state " + runtime.state() + ")", null);
        }
        return store;
    }

    private static Duration parseDuration(String text, String parameter) {
        try {
            return io.symmem.service.store.WaitDurations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new StoreHttpException(400, parameter + ": " + e.getMessage(), null);
        }
    }

    private static byte[] base64(String text, String field, String key) {
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new StoreHttpException(400, "\"" + field + "\" is not base64", key);
        }
    }
}
