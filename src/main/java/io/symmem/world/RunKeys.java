package io.symmem.world;

import io.smallrye.mutiny.Uni;
import io.symmem.config.SymmemConfig;
import io.symmem.store.PrefixStore;
import io.symmem.store.Store;
import java.time.Duration;
import java.util.List;

/**
 * This run's keys in a store that may outlive it (a `symmem store` sidecar, a TCPStore, etcd): under
 * SYMMEM_RUN_ID's prefix where one is set; counted at the join, so that an earlier run's keys are never
 * taken for this run's; removed at the end.
 */
final class RunKeys {
    private static final String RUN_PREFIX = "symmem/run/";
    /** Counted up once by every rank that joins: more joins than ranks means the keys are not this run's. */
    static final String JOINS_KEY = "symmem/world/joins";
    /** Where a rank's own keys live when no SYMMEM_RUN_ID prefixes them: StoreExchange's, the world's, liveness'. */
    private static final List<String> RUN_KEY_PREFIXES = List.of("symmem/ex/", "symmem/world/", "symmem/live/");

    private final SymmemConfig config;

    RunKeys(SymmemConfig config) {
        this.config = config;
    }

    /** The store under this run's prefix (SYMMEM_RUN_ID), or the store itself. */
    Store scoped(Store base) {
        return config.runId().<Store>map(id -> new PrefixStore(RUN_PREFIX + id, base)).orElse(base);
    }

    /** What {@link #scoped} puts before a key: the run's prefix and '/', or nothing. */
    String scope() {
        return config.runId().map(id -> RUN_PREFIX + id + "/").orElse("");
    }

    /**
     * A store that outlives a run still holds the previous run's world keys; joining on top of them would
     * pair this rank with ranks that are gone. Every rank counts itself in; a count above the world size
     * means this run's keys were used before.
     */
    void checkFirstJoin(Store runStore, Duration storeTimeout, String storeAddress) {
        long joins = runStore.add(JOINS_KEY, 1).await().atMost(storeTimeout.plusSeconds(5));
        if (joins > config.worldSize()) {
            throw new IllegalStateException("the store at " + storeAddress + " has seen " + joins + " world joins for "
                    + config.worldSize() + " ranks" + config.runId().map(id -> " under SYMMEM_RUN_ID=" + id).orElse("")
                    + ": it holds the keys of an earlier run. Give every run its own SYMMEM_RUN_ID when the store outlives runs"
                    + " (SYMMEM_STORE_HOST=" + config.store().host().id() + "), or restart the store");
        }
    }

    /** Deletes the keys this run wrote (under its SYMMEM_RUN_ID, or symmem's own prefixes without one). */
    int remove(Store runStore, Duration timeout) {
        List<String> mine = runStore.listKeys().await().atMost(timeout).stream()
                .filter(key -> config.runId().isPresent() || RUN_KEY_PREFIXES.stream().anyMatch(key::startsWith))
                .toList();
        int batch = 256; // pipelined deletes, a bounded number in flight
        for (int from = 0; from < mine.size(); from += batch) {
            List<Uni<Boolean>> deletes = mine.subList(from, Math.min(mine.size(), from + batch)).stream()
                    .map(runStore::delete).toList();
            Uni.join().all(deletes).andFailFast().await().atMost(timeout);
        }
        return mine.size();
    }
}
