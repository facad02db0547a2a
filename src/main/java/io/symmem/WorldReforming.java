package io.symmem;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.config.SymmemConfig;
import io.symmem.nativ.NativeCore;
import io.symmem.store.server.StoreServer;
import io.symmem.world.WorldEvents;
import io.symmem.world.WorldGenerationMovedException;
import io.symmem.world.WorldMember;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Consumer;

/**
 * A library rank's way from a lost generation of its world to the next one: give the lost one up, hand
 * the store this rank hosts to the new member, clear the process-wide native abort, join; a join whose
 * generation was given up meanwhile goes on in the next, and one that fails for another reason (a store
 * that is not back yet) is tried again until SYMMEM_TIMEOUT_RENDEZVOUS has passed.
 */
final class WorldReforming {
    private static final long RETRY_PAUSE_MS = 250;

    private WorldReforming() {
    }

    /**
     * @param current told of each member tried, so that the world always holds the one to close
     * @return the member of the new generation, joined
     */
    static WorldMember next(WorldMember lost, SymmemConfig config, Vertx vertx, Consumer<WorldMember> current) {
        long deadline = System.nanoTime() + config.timeout().rendezvous().toNanos();
        WorldMember previous = lost;
        while (true) {
            previous.giveUpGeneration();
            StoreServer kept = previous.releaseStoreServer();
            long first = previous.generation() + 1;
            previous.close();
            NativeCore.resetAbort();
            WorldMember next = new WorldMember(config, vertx, new ObjectMapper(), 0, new WorldEvents() {
            }, kept, Math.max(0, first));
            current.accept(next);
            try {
                next.join();
                return next;
            } catch (WorldGenerationMovedException moved) {
                previous = next;
            } catch (IOException | RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    next.close();  // and the store this rank hosts: the world is over for this rank
                    String message = "rank " + config.rank() + " could not form its world again within SYMMEM_TIMEOUT_RENDEZVOUS="
                            + config.timeout().rendezvous() + ": " + e.getMessage();
                    throw e instanceof IOException io ? new UncheckedIOException(message, io) : new IllegalStateException(message, e);
                }
                previous = next;
                pause();
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(RETRY_PAUSE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while forming the world again", e);
        }
    }
}
