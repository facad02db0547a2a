package io.symmem.service.world;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;
import java.util.List;

/**
 * One event of the world as a rank's sidecar tells it (GET /v1/events, and the event bus address
 * {@link WorldView#EVENT_BUS_ADDRESS}).
 *
 * @param seq numbers the events of this sidecar from 1, in the order it learned of them (the SSE id)
 * @param type {@code joined}, {@code ready}, {@code departed}, {@code aborted} or {@code reformed} (the world
 *     formed again after a loss, as generation {@code generation}: every rank is ready in it)
 * @param rank the rank the event is about; for {@code aborted}, the rank that aborted (this one)
 * @param ranks for {@code aborted}: the ranks found gone (empty when only the store is)
 * @param orderly for {@code departed}: true when the rank left in order, false when it is gone
 * @param reason what happened, in words
 * @param generation the world's generation the event belongs to (0 until the world first re-forms)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WorldEvent(long seq, String type, int rank, List<Integer> ranks, Boolean orderly, String reason, Instant at, long generation) {
}
