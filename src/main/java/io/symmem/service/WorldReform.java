package io.symmem.service;

import io.symmem.world.WorldGenerationMovedException;
import java.io.IOException;
import org.jboss.logging.Logger;

/**
 * Forms a rank's world again after it was lost (a peer died or restarted, or the store's host did): gives
 * up the lost generation, joins the next one beside the other survivors and the restarted rank, and
 * tries again until it forms or the rank stops. One attempt runs at a time; a loss reported while one
 * runs is taken up when it ends, so that a world lost again right after it formed forms again too.
 */
final class WorldReform {
    private static final Logger LOG = Logger.getLogger(WorldReform.class);
    /** Pause between attempts that failed for a reason other than a moved generation (a store not back yet). */
    private static final long RETRY_PAUSE_MS = 250;

    private final RankRuntime runtime;
    private String pendingReason;
    private boolean running;
    private volatile boolean stopped;

    WorldReform(RankRuntime runtime) {
        this.runtime = runtime;
    }

    /** The world was lost for {@code reason}: form it again (now, or when the attempt in progress ends). */
    synchronized void start(String reason) {
        pendingReason = reason;
        if (running || stopped) {
            return;
        }
        running = true;
        Thread worker = new Thread(this::run, "symmem-world-reform");
        worker.setDaemon(true);
        worker.start();
    }

    void stop() {
        stopped = true;
    }

    private void run() {
        while (true) {
            String reason;
            synchronized (this) {
                reason = pendingReason;
                pendingReason = null;
                if (reason == null || stopped) {
                    running = false;
                    return;
                }
            }
            formAgain(reason);
        }
    }

    private void formAgain(String reason) {
        int attempts = 0;
        while (!stopped) {
            attempts++;
            if (!runtime.replaceMember()) {
                return;
            }
            try {
                runtime.joinReformed(reason);
                return;
            } catch (WorldGenerationMovedException moved) {
                LOG.debugf("%s", moved.getMessage());
            } catch (RuntimeException | IOException e) {
                if (stopped) {
                    return;
                }
                LOG.infof("rank %d could not form its world again yet (attempt %d): %s", runtime.config().rank(),
                        attempts, e.getMessage());
                pause();
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(RETRY_PAUSE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
