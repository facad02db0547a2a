package io.symmem.store;

import java.nio.charset.StandardCharsets;

/**
 * The store keys of liveness, under a run's scope (the prefix a {@link PrefixStore} adds, or none):
 * <ul>
 * <li>{@code <scope>symmem/live/member/<rank>}: set by a rank on its liveness connection. A symmem
 * store server binds such a key to the connection that set it (an ephemeral key, like a ZooKeeper
 * ephemeral node): when that connection closes while the key still exists, the server deletes it and
 * publishes a departure. A rank that leaves in order deletes its key first.</li>
 * <li>{@code <scope>symmem/live/events}: the number of world events published (ADD): the log's length.</li>
 * <li>{@code <scope>symmem/live/event/<n>}: the n-th world event (1-based, a {@link WorldRecord}): a rank
 * joined, became ready, left in order, or is gone (a departure, published by the store when the rank's
 * connection closed, or by the rank that saw its heartbeat stop). Ranks wait for the next one, so a
 * departure reaches every rank as soon as it is published. A publisher claims its number with an ADD
 * and then sets the key; a number claimed by a process that died in between stays a hole, which
 * readers skip after a while (see LivenessAgent).</li>
 * <li>{@code <scope>symmem/live/beat/<rank>}: a rank's heartbeat counter (SET, which no pending WAIT
 * holds back), or {@link #LEFT} once it has left in order.</li>
 * </ul>
 */
public final class LiveKeys {
    static final String ROOT = "symmem/live/";
    public static final String MEMBER = ROOT + "member/";
    public static final String EVENTS = ROOT + "events";
    public static final String EVENT = ROOT + "event/";
    public static final String BEAT = ROOT + "beat/";
    /** The heartbeat value of a rank that has left in order: it is not missing, only done. */
    public static final String LEFT = "left";

    private LiveKeys() {
    }

    public static String member(int rank) {
        return MEMBER + rank;
    }

    public static String event(long n) {
        return EVENT + n;
    }

    public static String beat(int rank) {
        return BEAT + rank;
    }

    /**
     * The scope of a member key (what comes before {@code symmem/live/member/}), or null when
     * {@code key} is no member key (the rank part must be a decimal number).
     */
    public static String memberScope(String key) {
        int at = key.lastIndexOf(MEMBER);
        if (at < 0 || at + MEMBER.length() == key.length()) {
            return null;
        }
        for (int i = at + MEMBER.length(); i < key.length(); i++) {
            if (!Character.isDigit(key.charAt(i)) || i - at - MEMBER.length() >= 9) {
                return null;
            }
        }
        return key.substring(0, at);
    }

    /** The rank named by a member key for which {@link #memberScope} is not null. */
    public static int memberRank(String key) {
        return Integer.parseInt(key.substring(key.lastIndexOf(MEMBER) + MEMBER.length()));
    }

    /** What a world event says of its rank. */
    public enum Kind {
        /** The rank reached the store and joined liveness. */
        JOINED,
        /** The rank finished the world rendezvous. */
        READY,
        /** The rank left in order: it is done, not missing. */
        LEFT,
        /** The rank is gone without leaving (a departure): the world can no longer work. */
        GONE;

        String word() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One entry of the world log: the rank as decimal text, a space, the kind's word, a space and the
     * detail (for a departure: how it was noticed).
     */
    public record WorldRecord(int rank, Kind kind, String detail) {
        public static WorldRecord gone(int rank, String how) {
            return new WorldRecord(rank, Kind.GONE, how);
        }

        public byte[] encode() {
            return (rank + " " + kind.word() + " " + detail).getBytes(StandardCharsets.UTF_8);
        }

        public static WorldRecord decode(byte[] value) {
            String text = new String(value, StandardCharsets.UTF_8).trim();
            String[] parts = text.split(" ", 3);
            try {
                int rank = Integer.parseInt(parts[0]);
                Kind kind = Kind.valueOf(parts.length > 1 ? parts[1].toUpperCase(java.util.Locale.ROOT) : "");
                return new WorldRecord(rank, kind, parts.length > 2 ? parts[2] : "");
            } catch (IllegalArgumentException e) {
                throw new StoreProtocolException("a world event key holds '" + text + "' instead of '<rank> <joined|ready|left|gone> <detail>'");
            }
        }
    }
}
