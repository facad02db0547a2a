package io.symmem.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.smallrye.mutiny.Uni;
import io.symmem.service.groups.BootstrapIds;
import io.symmem.service.groups.CallLanes;
import io.symmem.service.groups.SidecarGroup;
import io.symmem.service.groups.SidecarGroups;
import io.symmem.service.groups.SmallReduce;
import io.symmem.service.http.ApiProblem;
import io.symmem.service.store.HttpWaitLimit;
import io.symmem.service.store.WaitDurations;
import io.symmem.store.ExchangeMismatchException;
import io.symmem.store.ExchangeOutOfStepException;
import io.symmem.store.RendezvousAbortedException;
import io.symmem.store.RendezvousTimeoutException;
import io.symmem.store.StoreExchange;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Function;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Groups and the control plane's collectives over HTTP, each rank's sidecar answering for its rank:
 * every member's process calls its own sidecar, and the calls meet through the store (the group's
 * {@link io.symmem.store.StoreExchange}, as Java users of the same group meet). Every wait takes
 * {@code ?timeout=} (default SYMMEM_TIMEOUT_RENDEZVOUS) and answers 504 naming the world ranks that did
 * not come; a world that failed answers 503 naming the ranks that are gone. Values travel as JSON.
 * Reference: docs/http-api.md.
 */
@Path("/v1/groups")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "groups", description = "Groups and the control plane's collectives; every member calls its own sidecar")
public class GroupsResource {
    private static final String TIMEOUT = "How long to wait for the other members: 500ms, 5s, 2m or PT5S (default SYMMEM_TIMEOUT_RENDEZVOUS)";
    private static final String PROBLEM_504 = "{\"type\":\"about:blank\",\"title\":\"Gateway Timeout\",\"status\":504,\"detail\":\"group 'pair' barrier: world ranks [1] did not come in time (...)\",\"error\":\"...\",\"ranks\":[1]}";
    private static final String TAG = "The caller's own lane of the group (1 to 64 of A-Z a-z 0-9 . _ -): calls pair across members"
            + " by order within a lane, and a lane takes one call at a time, so callers that run at once each pass their own tag";
    private static final String PROBLEM_409 = "{\"type\":\"about:blank\",\"title\":\"Conflict\",\"status\":409,\"detail\":\"all_gather of group 'world' (instance 1, round 4) refused: the group is out of step since round 3 (...)...\"}";
    private static final String RESULT = "{\"group\":\"world\",\"rank\":0,\"size\":2,\"ranks\":[0,1]";

    @Inject
    RankRuntime runtime;
    @Inject
    SidecarGroups groups;
    @Inject
    BootstrapIds ids;
    @Inject
    HttpWaitLimit waits;
    @Inject
    ObjectMapper json;

    /** A group as GET /v1/groups shows it: its world ranks, this rank's place in it, rounds so far. */
    public record GroupInfo(String name, List<Integer> ranks, int size, int rank, int groupRank, long rounds) {
        static GroupInfo of(SidecarGroup g, int worldRank) {
            return new GroupInfo(g.name(), g.ranks(), g.size(), worldRank, g.rank(), g.exchange().rounds());
        }
    }

    public record GroupList(int rank, List<GroupInfo> groups) {
    }

    /** The body of POST /v1/groups. */
    public record NewGroup(String name, List<Integer> ranks) {
    }

    @Operation(summary = "The groups of this rank, the world first")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two groups",
            value = "{\"rank\":0,\"groups\":[{\"name\":\"world\",\"ranks\":[0,1],\"size\":2,\"rank\":0,\"groupRank\":0,\"rounds\":3},"
                    + "{\"name\":\"pair\",\"ranks\":[1,0],\"size\":2,\"rank\":0,\"groupRank\":1,\"rounds\":0}]}")))
    @GET
    public GroupList list() {
        int rank = runtime.config().rank();
        requireJoined();
        return new GroupList(rank, groups.list().stream().map(g -> GroupInfo.of(g, rank)).toList());
    }

    @Operation(summary = "One group: its world ranks, this rank's place in it, rounds so far")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "pair",
            value = "{\"name\":\"pair\",\"ranks\":[1,0],\"size\":2,\"rank\":0,\"groupRank\":1,\"rounds\":0}")))
    @APIResponse(responseCode = "404", description = "No such group on this rank")
    @GET
    @Path("/{name}")
    public GroupInfo get(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name) {
        requireJoined();
        return GroupInfo.of(groups.get(name), runtime.config().rank());
    }

    /** Collective over the new group's members: 201 once all of them made it, 200 if it existed already. */
    @Operation(summary = "Make a group with its other members", description = "Collective over the members: each asks its own "
            + "sidecar with the same name and ranks; answers once all have. Group rank i is the i-th world rank listed.")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "pair",
            value = "{\"name\":\"pair\",\"ranks\":[0,1]}")))
    @APIResponse(responseCode = "201", description = "Made now", content = @Content(mediaType = MediaType.APPLICATION_JSON,
            examples = @ExampleObject(name = "made", value = "{\"name\":\"pair\",\"ranks\":[0,1],\"size\":2,\"rank\":0,\"groupRank\":0,\"rounds\":0}")))
    @APIResponse(responseCode = "200", description = "It existed already with the same ranks")
    @APIResponse(responseCode = "409", description = "It exists with other ranks")
    @APIResponse(responseCode = "504", description = "A member did not come", content = @Content(mediaType = "application/problem+json",
            examples = @ExampleObject(name = "missing member", value = PROBLEM_504)))
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> create(NewGroup body, @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout) {
        requireJoined();
        if (body == null || body.name() == null) {
            throw new ApiProblem(400, "the body must be {\"name\": \"pair\", \"ranks\": [0, 1]}: \"name\" is missing");
        }
        if (body.ranks() == null || body.ranks().contains(null)) {
            throw new ApiProblem(400, "group '" + body.name() + "': \"ranks\" must be an array of world ranks, e.g. [0, 1]");
        }
        int[] ranks = body.ranks().stream().mapToInt(Integer::intValue).toArray();
        Duration wait = timeout(timeout);
        return waits.run(runtime.config().rank(), () -> groups.create(body.name(), ranks, wait))
                .onFailure(e -> !(e instanceof ApiProblem)).transform(e -> explain(e, body.name(), "creation", ranks))
                .map(made -> Response.status(made.created() ? 201 : 200)
                        .entity(GroupInfo.of(made.group(), runtime.config().rank())).build());
    }

    @Operation(summary = "Barrier: answers once every member of the group has called it")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "passed",
            value = RESULT + "}")))
    @APIResponse(responseCode = "504", description = "A member did not come", content = @Content(mediaType = "application/problem+json",
            examples = @ExampleObject(name = "missing member", value = PROBLEM_504)))
    @APIResponse(responseCode = "409", description = "Another call holds this lane here, or the group is out of step since a failed round (make a new group)",
            content = @Content(mediaType = "application/problem+json", examples = @ExampleObject(name = "out of step", value = PROBLEM_409)))
    @POST
    @Path("/{name}/barrier")
    public Uni<ObjectNode> barrier(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @Parameter(description = TAG, example = "worker-1") @QueryParam("tag") String tag) {
        SidecarGroup g = group(name);
        Duration wait = timeout(timeout);
        return collective(g, "barrier", tag, exchange -> exchange.barrier(wait)).map(ok -> result(g));
    }

    /** {@code root} is a world rank of the group; its {"value": ...} reaches every member, whose own bodies are not read. */
    @Operation(summary = "Broadcast: world rank `root`'s {\"value\": ...} reaches every member")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "a value",
            value = "{\"value\":{\"step\":42}}")))
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "root 0",
            value = RESULT + ",\"root\":0,\"value\":{\"step\":42}}")))
    @APIResponse(responseCode = "409", description = "Another call holds this lane here, or the group is out of step since a failed round (make a new group)",
            content = @Content(mediaType = "application/problem+json", examples = @ExampleObject(name = "out of step", value = PROBLEM_409)))
    @POST
    @Path("/{name}/broadcast")
    public Uni<ObjectNode> broadcast(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name, @QueryParam("root") String rootText,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @Parameter(description = TAG, example = "worker-1") @QueryParam("tag") String tag,
            String body) {
        SidecarGroup g = group(name);
        if (rootText == null) {
            throw new ApiProblem(400, "broadcast needs ?root= (the world rank whose value every member gets), one of " + g.ranks());
        }
        int root;
        try {
            root = Integer.parseInt(rootText.trim());
        } catch (NumberFormatException e) {
            throw new ApiProblem(400, "?root=" + rootText + " is not a rank; use one of " + g.ranks());
        }
        int groupRoot = g.ranks().indexOf(root);
        if (groupRoot < 0) {
            throw new ApiProblem(400, "root " + root + " is not in group '" + name + "' (world ranks " + g.ranks() + ")");
        }
        byte[] mine = groupRoot == g.rank() ? valueBytes(body, "broadcast") : new byte[0];
        Duration wait = timeout(timeout);
        return collective(g, "broadcast", tag, exchange -> exchange.broadcast(groupRoot, mine, wait))
                .map(value -> {
                    ObjectNode out = result(g);
                    out.put("root", root);
                    out.set("value", decode(value));
                    return out;
                });
    }

    /** Every member's {"value": ...}, in group-rank order. */
    @Operation(summary = "All-gather: every member's {\"value\": ...}, in group-rank order")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "a value",
            value = "{\"value\":\"host-a\"}")))
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two members",
            value = RESULT + ",\"values\":[\"host-a\",\"host-b\"]}")))
    @APIResponse(responseCode = "409", description = "Another call holds this lane here, or the group is out of step since a failed round (make a new group)",
            content = @Content(mediaType = "application/problem+json", examples = @ExampleObject(name = "out of step", value = PROBLEM_409)))
    @POST
    @Path("/{name}/all-gather")
    public Uni<ObjectNode> allGather(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @Parameter(description = TAG, example = "worker-1") @QueryParam("tag") String tag,
            String body) {
        SidecarGroup g = group(name);
        byte[] mine = valueBytes(body, "all-gather");
        Duration wait = timeout(timeout);
        return collective(g, "all-gather", tag, exchange -> exchange.allGather(mine, wait)).map(all -> {
            ObjectNode out = result(g);
            var values = out.putArray("values");
            all.forEach(v -> values.add(decode(v)));
            return out;
        });
    }

    /** {"dtype": "int64", "op": "sum", "values": [...]} from every member; every member gets the same result. */
    @Operation(summary = "All-reduce of a small numeric array: the same bits on every member",
            description = "dtype int32, int64, float32 or float64; op sum, avg (float types), max or min; at most 65536 values.")
    @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "int64 sum",
            value = "{\"dtype\":\"int64\",\"op\":\"sum\",\"values\":[3,1]}")))
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two members",
            value = RESULT + ",\"dtype\":\"int64\",\"op\":\"sum\",\"values\":[7,2]}")))
    @APIResponse(responseCode = "409", description = "The members sent different dtypes, ops or lengths; another call holds this lane here; or the group is out of step since a failed round (make a new group)",
            content = @Content(mediaType = "application/problem+json", examples = @ExampleObject(name = "out of step", value = PROBLEM_409)))
    @POST
    @Path("/{name}/all-reduce")
    public Uni<ObjectNode> allReduce(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @Parameter(description = TAG, example = "worker-1") @QueryParam("tag") String tag,
            String body) {
        SidecarGroup g = group(name);
        SmallReduce.Contribution mine = SmallReduce.parse(parse(body, "all-reduce"));
        Duration wait = timeout(timeout);
        return collective(g, "all-reduce", tag, exchange -> exchange.allGather("all-reduce", SmallReduce.encode(mine), wait)).map(all -> {
            ObjectNode out = result(g);
            out.setAll(SmallReduce.toJson(SmallReduce.reduce(all, g)));
            return out;
        });
    }

    @Operation(summary = "The group's NCCL unique id: the same bytes on every member",
            description = "Made by the sidecar of the group's rank 0, read from the store by the others. JSON with base64, or the raw "
                    + "bytes with Accept: application/octet-stream.")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "id",
            value = RESULT + ",\"kind\":\"nccl\",\"bytes\":128,\"base64\":\"AgC...\"}")))
    @APIResponse(responseCode = "503", description = "The library is missing on rank 0's machine")
    @GET
    @Path("/{name}/nccl-unique-id")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    public Uni<Response> ncclUniqueId(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @HeaderParam("Accept") String accept) {
        return uniqueId(name, BootstrapIds.Kind.NCCL, timeout, accept);
    }

    @Operation(summary = "The group's NVSHMEM unique id: the same bytes on every member",
            description = "Made by the sidecar of the group's rank 0, read from the store by the others. JSON with base64, or the raw "
                    + "bytes with Accept: application/octet-stream.")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "id",
            value = RESULT + ",\"kind\":\"nvshmem\",\"bytes\":128,\"base64\":\"AgC...\"}")))
    @APIResponse(responseCode = "503", description = "The library is missing on rank 0's machine")
    @GET
    @Path("/{name}/nvshmem-unique-id")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    public Uni<Response> nvshmemUniqueId(
            @Parameter(description = "The group (world: every rank)", example = "world") @PathParam("name") String name,
            @Parameter(description = TIMEOUT, example = "30s") @QueryParam("timeout") String timeout,
            @HeaderParam("Accept") String accept) {
        return uniqueId(name, BootstrapIds.Kind.NVSHMEM, timeout, accept);
    }

    /** Raw bytes when the caller accepts application/octet-stream (and not JSON first), else JSON with base64. */
    private Uni<Response> uniqueId(String name, BootstrapIds.Kind kind, String timeout, String accept) {
        SidecarGroup g = group(name);
        Duration wait = timeout(timeout);
        boolean raw = accept != null && accept.contains(MediaType.APPLICATION_OCTET_STREAM)
                && !accept.startsWith(MediaType.APPLICATION_JSON);
        return waits.run(runtime.config().rank(), () -> ids.id(g, kind, wait)).map(id -> {
            if (raw) {
                return Response.ok(id, MediaType.APPLICATION_OCTET_STREAM).build();
            }
            ObjectNode out = result(g);
            out.put("kind", kind.word());
            out.put("bytes", id.length);
            out.put("base64", Base64.getEncoder().encodeToString(id));
            return Response.ok(out, MediaType.APPLICATION_JSON).build();
        });
    }

    // ---- helpers ------------------------------------------------------------------------------

    private SidecarGroup group(String name) {
        requireJoined();
        return groups.get(name);
    }

    private void requireJoined() {
        if (runtime.state() != RankRuntime.State.READY) {
            throw new ApiProblem(503, "rank " + runtime.config().rank() + " is not in a working world (state "
                    + runtime.state() + (runtime.error() == null ? "" : ": " + runtime.error()) + ")");
        }
    }

    private Duration timeout(String text) {
        if (text == null) {
            return runtime.config().timeout().rendezvous();
        }
        try {
            return WaitDurations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(400, "?timeout=" + text + ": " + e.getMessage());
        }
    }

    /**
     * Runs {@code call} on the exchange of the caller's lane, which it holds until the call ends however
     * it ends (answer, failure, the caller leaving); a lane already held answers 409 at once.
     */
    private <T> Uni<T> collective(SidecarGroup g, String op, String tag, Function<StoreExchange, Uni<T>> call) {
        int[] ranks = g.worldRanks();
        int rank = runtime.config().rank();
        CallLanes.Lane lane = g.lanes().lane(tag);
        lane.take(op, rank);
        Uni<T> running;
        try {
            running = waits.run(rank, () -> call.apply(lane.exchange()));
        } catch (RuntimeException e) {
            lane.release();
            throw e;
        }
        return running.onTermination().invoke(lane::release)
                .onFailure(e -> !(e instanceof ApiProblem)).transform(e -> explain(e, g.name(), op, ranks));
    }

    /** A collective's timeout or abort, with the world ranks it concerns; anything else as it is. */
    private static Throwable explain(Throwable e, String group, String op, int[] worldRanks) {
        Function<List<Integer>, List<Integer>> toWorld = groupRanks -> {
            List<Integer> out = new ArrayList<>();
            for (int r : groupRanks) {
                out.add(r >= 0 && r < worldRanks.length ? worldRanks[r] : r);
            }
            return out;
        };
        if (e instanceof RendezvousTimeoutException t) {
            List<Integer> missing = t.groupName().endsWith("~members") ? sortedWorld(worldRanks, t.missingRanks())
                    : toWorld.apply(t.missingRanks());
            return new ApiProblem(504, "group '" + group + "' " + op + ": world ranks " + missing + " did not come in time ("
                    + t.getMessage() + ")", missing, e);
        }
        if (e instanceof ExchangeOutOfStepException || e instanceof ExchangeMismatchException) {
            return new ApiProblem(409, "group '" + group + "' " + op + ": " + e.getMessage(), null, e);
        }
        if (e instanceof RendezvousAbortedException a) {
            return new ApiProblem(503, "group '" + group + "' " + op + " was cut short: " + a.reason(), null, e);
        }
        return e;
    }

    /** The member check is indexed by the members' sorted order. */
    private static List<Integer> sortedWorld(int[] worldRanks, List<Integer> indexes) {
        int[] sorted = worldRanks.clone();
        java.util.Arrays.sort(sorted);
        List<Integer> out = new ArrayList<>();
        for (int i : indexes) {
            out.add(i >= 0 && i < sorted.length ? sorted[i] : i);
        }
        return out;
    }

    private ObjectNode result(SidecarGroup g) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("group", g.name());
        out.put("rank", runtime.config().rank());
        out.put("size", g.size());
        var ranks = out.putArray("ranks");
        g.ranks().forEach(ranks::add);
        return out;
    }

    private JsonNode parse(String body, String op) {
        if (body == null || body.isBlank()) {
            throw new ApiProblem(400, op + " needs a JSON body");
        }
        try {
            return json.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ApiProblem(400, "the body of " + op + " is not JSON: " + e.getOriginalMessage());
        }
    }

    /** The bytes of {"value": ...}: the value's JSON text. */
    private byte[] valueBytes(String body, String op) {
        JsonNode node = parse(body, op);
        if (!node.isObject() || !node.has("value")) {
            throw new ApiProblem(400, op + " takes {\"value\": <any JSON>}; the body has no \"value\"");
        }
        return node.get("value").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A member's bytes as JSON; bytes that are not JSON (from a Java member, say) as {"base64": ...}. */
    private JsonNode decode(byte[] value) {
        try {
            JsonNode node = json.readTree(value);
            if (node != null && !node.isMissingNode()) {
                return node;
            }
        } catch (java.io.IOException notJson) {
            // below
        }
        return JsonNodeFactory.instance.objectNode().put("base64", Base64.getEncoder().encodeToString(value));
    }
}
