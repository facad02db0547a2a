package io.symmem.cli;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Where a rank is when the chaos driver kills one of its peers. */
enum ChaosPhase {
    /** Allocating and freeing symmetric buffers: store all_gather, fd exchange, barrier. */
    RENDEZVOUS,
    /** Back-to-back all-reduces on one buffer. */
    COLLECTIVE,
    /** Back-to-back signal-pad barriers on one buffer. */
    BARRIER,
    /** Back-to-back store barriers (StoreExchange): store waits. */
    STORE,
    /** Nothing: joined, waiting. */
    IDLE;

    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    static ChaosPhase parse(String text) {
        for (ChaosPhase p : values()) {
            if (p.id().equals(text.trim().toLowerCase(Locale.ROOT))) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown phase '" + text + "': use one of "
                + Arrays.stream(values()).map(ChaosPhase::id).collect(Collectors.joining(", ")));
    }
}
