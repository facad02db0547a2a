package io.symmem.world;

import io.symmem.store.Store;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * An orderly end of a world: every rank but 0 reports in the store that it no longer needs it, and rank
 * 0, which may host the store, waits for those reports before it shuts the store down.
 */
final class LeaveReports {
    private static final Logger LOG = Logger.getLogger(LeaveReports.class);
    private static final String LEFT_PREFIX = "symmem/world/left/";

    private LeaveReports() {
    }

    /** This rank is done with the store. */
    static void report(Store runStore, int rank, Duration timeout) {
        runStore.set(LEFT_PREFIX + rank, new byte[] {1}).await().atMost(timeout);
    }

    /** Rank 0: waits (up to {@code wait}) for every other rank's report; goes on without the missing ones. */
    static void awaitOthers(Store runStore, int worldSize, Duration wait) {
        List<String> others = new ArrayList<>();
        for (int r = 1; r < worldSize; r++) {
            others.add(LEFT_PREFIX + r);
        }
        if (others.isEmpty()) {
            return;
        }
        try {
            runStore.await(others, wait).await().atMost(wait.plusSeconds(5));
        } catch (RuntimeException e) {
            // Leaving anyway: the ranks still running lose the store with this process, and say so.
            LOG.warnf("rank 0 leaves before every other rank reported that it left: %s", e.getMessage());
        }
    }
}
