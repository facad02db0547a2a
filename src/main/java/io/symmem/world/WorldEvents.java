package io.symmem.world;

import io.symmem.liveness.WorldFailure;
import io.symmem.store.LiveKeys;
import io.symmem.store.server.StoreServer;

/**
 * What the owner of a {@link WorldMember} hears about (the service: metrics, readiness, world events).
 *
 * <pre>{@code
 * new WorldMember(config, vertx, json, 0, new WorldEvents() {
 *     public void worldFailed(WorldFailure failure) {
 *         System.err.println("world lost: " + failure.reason());
 *     }
 * });
 * }</pre>
 */
public interface WorldEvents {
    /** This rank now serves the store (before it connects to it). */
    default void storeHosted(StoreServer server) {
    }

    /** The world failed; the native waits have been aborted already. */
    default void worldFailed(WorldFailure failure) {
    }

    /**
     * An entry of the world log: a rank joined, became ready, left or is gone (this rank's own
     * entries included), in log order, on a liveness thread; must not block.
     */
    default void worldRecord(LiveKeys.WorldRecord record) {
    }
}
