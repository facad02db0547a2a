package io.symmem.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.smallrye.mutiny.Uni;
import io.symmem.service.groups.BootstrapIds;
import io.symmem.service.groups.SidecarGroup;
import io.symmem.service.groups.SidecarGroups;
import io.symmem.service.groups.SmallReduce;
import io.symmem.service.http.ApiProblem;
import io.symmem.service.store.HttpWaitLimit;
import io.symmem.service.store.WaitDurations;
import io.symmem.store.RendezvousAbortedException;
import io.symmem.store.RendezvousTimeoutException;
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
public class GroupsResource {

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

    @GET
    public GroupList list() {
        int rank = runtime.config().rank();
        requireJoined();
        return new GroupList(rank, groups.list().stream().map(g -> GroupInfo.of(g, rank)).toList());
    }

    @GET
    @Path("/{name}")
    public GroupInfo get(@PathParam("name") String name) {
        requireJoined();
        return GroupInfo.of(groups.get(name), runtime.config().rank());
    }

    /** Collective over the new group's members: 201 once all of them made it, 200 if it existed already. */
    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> create(NewGroup body, @QueryParam("timeout") String timeout) {
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

    @POST
    @Path("/{name}/barrier")
    public Uni<ObjectNode> barrier(@PathParam("name") String name, @QueryParam("timeout") String timeout) {
        SidecarGroup g = group(name);
        Duration wait = timeout(timeout);
        return collective(g, "barrier", () -> g.exchange().barrier(wait)).map(ok -> result(g));
    }

    /** {@code root} is a world rank of the group; its {"value": ...} reaches every member, whose own bodies are not read. */
    @POST
    @Path("/{name}/broadcast")
    public Uni<ObjectNode> broadcast(@PathParam("name") String name, @QueryParam("root") String rootText,
            @QueryParam("timeout") String timeout, String body) {
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
        return collective(g, "broadcast", () -> g.exchange().broadcast(groupRoot, mine, wait))
                .map(value -> {
                    ObjectNode out = result(g);
                    out.put("root", root);
                    out.set("value", decode(value));
                    return out;
                });
    }

    /** Every member's {"value": ...}, in group-rank order. */
    @POST
    @Path("/{name}/all-gather")
    public Uni<ObjectNode> allGather(@PathParam("name") String name, @QueryParam("timeout") String timeout, String body) {
        SidecarGroup g = group(name);
        byte[] mine = valueBytes(body, "all-gather");
        Duration wait = timeout(timeout);
        return collective(g, "all-gather", () -> g.exchange().allGather(mine, wait)).map(all -> {
            ObjectNode out = result(g);
            var values = out.putArray("values");
            all.forEach(v -> values.add(decode(v)));
            return out;
        });
    }

    /** {"dtype": "int64", "op": "sum", "values": [...]} from every member; every member gets the same result. */
    @POST
    @Path("/{name}/all-reduce")
    public Uni<ObjectNode> allReduce(@PathParam("name") String name, @QueryParam("timeout") String timeout, String body) {
        SidecarGroup g = group(name);
        SmallReduce.Contribution mine = SmallReduce.parse(parse(body, "all-reduce"));
        Duration wait = timeout(timeout);
        return collective(g, "all-reduce", () -> g.exchange().allGather(SmallReduce.encode(mine), wait)).map(all -> {
            ObjectNode out = result(g);
            out.setAll(SmallReduce.toJson(SmallReduce.reduce(all, g)));
            return out;
        });
    }

    @GET
    @Path("/{name}/nccl-unique-id")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    public Uni<Response> ncclUniqueId(@PathParam("name") String name, @QueryParam("timeout") String timeout,
            @HeaderParam("Accept") String accept) {
        return uniqueId(name, BootstrapIds.Kind.NCCL, timeout, accept);
    }

    @GET
    @Path("/{name}/nvshmem-unique-id")
    @Produces({MediaType.APPLICATION_JSON, MediaType.APPLICATION_OCTET_STREAM})
    public Uni<Response> nvshmemUniqueId(@PathParam("name") String name, @QueryParam("timeout") String timeout,
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

    private <T> Uni<T> collective(SidecarGroup g, String op, java.util.function.Supplier<Uni<T>> call) {
        int[] ranks = g.worldRanks();
        return waits.run(runtime.config().rank(), call).onFailure(e -> !(e instanceof ApiProblem))
                .transform(e -> explain(e, g.name(), op, ranks));
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
