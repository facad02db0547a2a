package io.symmem.service.world;

/** What a sidecar knows of one rank of its world; a rank only moves down this list. */
public enum RankState {
    /** Nothing heard of it yet. */
    UNKNOWN,
    /** It reached the store and joined liveness. */
    JOINED,
    /** It finished the world rendezvous. */
    READY,
    /** It left in order. */
    LEFT,
    /** It is gone without leaving (killed, hung, or the store it hosted is gone). */
    GONE;

    boolean isFinal() {
        return this == LEFT || this == GONE;
    }
}
