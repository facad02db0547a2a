package io.symmem.world;

import io.smallrye.mutiny.Uni;
import io.symmem.config.SymmemConfig;
import io.symmem.store.PrefixStore;
import io.symmem.store.Store;
import java.time.Duration;
import java.util.List;

/**
 * This run's keys in a store that may outlive it (a `symmem store` sidecar, a TCPStore, etcd): under
 * SYMMEM_RUN_ID's prefix where one is set; removed at the end. A run that did not end in order leaves
 * its keys, and the next run on them joins a later generation ({@link WorldGeneration}).
 */
final class RunKeys {
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(RunKeys.class);
    private static final String RUN_PREFIX = "symmem/run/";
    /** Where a rank's own keys live when no SYMMEM_RUN_ID prefixes them: StoreExchange's, the world's, liveness'. */
    private static final List<String> RUN_KEY_PREFIXES = List.of("symmem/ex/", "symmem/world/", "symmem/live/", "symmem/gen/");

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
     * Deletes the keys this run wrote from {@code base} (the whole store), saying how many; a failure is
     * only logged: the run itself is done, only the tidying failed (e.g. a server without LIST_KEYS).
     */
    void removeAll(Store base, Duration timeout, String storeAddress) {
        try {
            int removed = remove(scoped(base), timeout);
            LOG.infof("removed this run's %d keys from the store at %s", removed, storeAddress);
        } catch (RuntimeException e) {
            LOG.warnf("could not remove this run's keys from the store at %s (they stay until it restarts): %s",
                    storeAddress, e.getMessage());
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
