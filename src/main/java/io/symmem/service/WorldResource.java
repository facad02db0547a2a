package io.symmem.service;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Multi;
import io.symmem.service.http.ApiProblem;
import io.symmem.service.world.WorldEvent;
import io.symmem.service.world.WorldView;
import io.symmem.store.server.StoreFigures;
import io.symmem.store.server.StoreServer;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The world as this rank sees it: GET /v1/world (every rank's state, the store) and GET /v1/events, a
 * server-sent-events stream of ranks joining, becoming ready, departing, and this rank aborting. Both
 * read the {@link WorldView}, which the world log feeds: the same entries that make survivors fail fast.
 */
@Path("/v1")
@Tag(name = "world", description = "The world as this rank sees it, and its events")
public class WorldResource {

    @Inject
    RankRuntime runtime;
    @Inject
    com.fasterxml.jackson.databind.ObjectMapper json;

    /** The store as this rank reaches it; figures only on the rank that hosts it. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record StoreView(String address, boolean hosted, Long keys, Integer connections, Integer pendingWaits) {
    }

    /**
     * @param generation the generation of the world this rank is in: 0 until the world first forms again
     *     after losing a rank
     * @param reforms how many times this rank formed its world again
     */
    public record World(int rank, int worldSize, String state, String error, String backend, StoreView store,
            List<WorldView.RankEntry> ranks, long lastEvent, long generation, long reforms) {
    }

    @Operation(summary = "Every rank's state as this rank knows it, and the store")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two ranks",
            value = "{\"rank\":0,\"worldSize\":2,\"state\":\"READY\",\"error\":null,\"backend\":\"host\",\"store\":{\"address\":"
                    + "\"127.0.0.1:29500\",\"hosted\":true,\"keys\":13,\"connections\":4,\"pendingWaits\":2},\"ranks\":[{\"rank\":0,"
                    + "\"state\":\"READY\",\"detail\":\"finished the world rendezvous\",\"at\":\"2026-11-23T21:16:28Z\"},{\"rank\":1,"
                    + "\"state\":\"LEFT\",\"detail\":\"left in order\",\"at\":\"2026-11-23T21:20:02Z\"}],\"lastEvent\":5}")))
    @GET
    @Path("/world")
    @NonBlocking
    @Produces(MediaType.APPLICATION_JSON)
    public World world() {
        WorldView view = view();
        StoreServer server = runtime.storeServer();
        StoreFigures f = server == null ? null : server.figures();
        StoreView store = new StoreView(runtime.storeAddress(), f != null, f == null ? null : f.keys(),
                f == null ? null : f.openConnections(), f == null ? null : f.pendingWaits());
        var backend = runtime.backend();
        return new World(runtime.config().rank(), runtime.config().worldSize(), runtime.state().name(), runtime.error(),
                backend == null ? runtime.config().backend().id() : backend.name(), store, view.ranks(), view.lastSeq(),
                runtime.generation(), runtime.reforms());
    }

    /**
     * Every event this rank has seen (from a bounded history) and then each new one as it comes. A
     * client that reconnects sends Last-Event-ID (browsers' EventSource does) or {@code ?since=} and gets
     * only what it missed.
     */
    @Operation(summary = "Server-sent events: joined, ready, departed (orderly or not), aborted, reformed",
            description = "Every event so far (the last 4096), then each new one. Reconnect with Last-Event-ID or ?since=N.")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.SERVER_SENT_EVENTS, examples = @ExampleObject(
            name = "a departure", value = "id:5\nevent:departed\ndata:{\"seq\":5,\"type\":\"departed\",\"rank\":1,\"orderly\":false,"
                    + "\"reason\":\"its connection to the store closed without leaving\",\"at\":\"2026-11-23T21:20:02Z\"}\n")))
    @GET
    @Path("/events")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    public Multi<OutboundSseEvent> events(@HeaderParam("Last-Event-ID") String lastEventId,
            @Parameter(description = "Only events after this number", example = "4") @QueryParam("since") String since,
            @Context Sse sse) {
        long after = position(lastEventId != null ? lastEventId : since, lastEventId != null ? "Last-Event-ID" : "since");
        // The data is JSON text written here: an event with a media type of its own would carry a
        // "content-type:" line, which is no SSE field.
        return view().events(after).map(e -> sse.newEventBuilder().id(Long.toString(e.seq())).name(e.type())
                .data(String.class, text(e)).build());
    }

    private String text(WorldEvent e) {
        try {
            return json.writeValueAsString(e);
        } catch (com.fasterxml.jackson.core.JsonProcessingException impossible) {
            throw new IllegalStateException("a world event could not be written as JSON", impossible);
        }
    }

    private WorldView view() {
        WorldView view = runtime.view();
        if (view == null) {
            throw new ApiProblem(503, "rank " + runtime.config().rank() + " has not started joining its world");
        }
        return view;
    }

    private static long position(String text, String what) {
        if (text == null) {
            return 0;
        }
        try {
            long n = Long.parseLong(text.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new ApiProblem(400, what + " '" + text + "' is not an event number (0 or more)");
        }
    }
}
