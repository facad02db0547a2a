package io.symmem.service.store;

import java.util.List;
import java.util.Map;

/** Small JSON shapes of the store routes. */
public final class StoreDtos {

    private StoreDtos() {}

    /** Answer of {@code POST .../add}. */
    public record AddResult(long value) {}

    /** Body of {@code POST .../compare-set}: base64 of the expected and desired bytes (empty string = missing key). */
    public record CompareSetRequest(String expected, String desired) {}

    /** Answer of compare-set: the value afterwards (base64) and whether {@code desired} was stored. */
    public record CompareSetResult(String value, boolean swapped) {}

    /** Body of {@code POST /v1/store/wait}. */
    public record WaitRequest(List<String> keys, String timeout) {}

    /** Answer of a successful wait. */
    public record WaitResult(List<String> keys) {}

    /** Answer of {@code GET /v1/store/keys}. */
    public record KeyList(List<String> keys) {}

    /** Answer of {@code GET /v1/store/stats}; the server fields are null on ranks that do not host the store. */
    public record Stats(String store, int rank, boolean hostsStore, Long keys, Long queues, Integer openConnections,
            Long connectionsAccepted, Integer pendingWaits, Map<String, Long> opsServed) {}
}
