package io.symmem.store;

import java.nio.charset.StandardCharsets;

/**
 * The store keys of liveness, under a run's scope (the prefix a {@link PrefixStore} adds, or none):
 * <ul>
 * <li>{@code <scope>symmem/live/member/<rank>}: set by a rank on its liveness connection. A symmem
 * store server binds such a key to the connection that set it (an ephemeral key, like a ZooKeeper
 * ephemeral node): when that connection closes while the key still exists, the server deletes it and
 * publishes a departure. A rank that leaves in order deletes its key first.</li>
 * <li>{@code <scope>symmem/live/departures}: the number of departures published (ADD).</li>
 * <li>{@code <scope>symmem/live/departure/<n>}: the n-th departure (1-based): the rank as decimal text,
 * a space, and how it was noticed. Ranks wait for the next one, so a departure reaches every rank as
 * soon as it is published.</li>
 * <li>{@code <scope>symmem/live/beat/<rank>}: a rank's heartbeat counter (SET, which no pending WAIT
 * holds back), or {@link #LEFT} once it has left in order.</li>
 * </ul>
 */
public final class LiveKeys {
    static final String ROOT = "symmem/live/";
    public static final String MEMBER = ROOT + "member/";
    public static final String DEPARTURES = ROOT + "departures";
    public static final String DEPARTURE = ROOT + "departure/";
    public static final String BEAT = ROOT + "beat/";
    /** The heartbeat value of a rank that has left in order: it is not missing, only done. */
    public static final String LEFT = "left";

    private LiveKeys() {
    }

    public static String member(int rank) {
        return MEMBER + rank;
    }

    public static String departure(long n) {
        return DEPARTURE + n;
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

    /** A published departure: the rank and how it was noticed. */
    public record Departure(int rank, String how) {
        public byte[] encode() {
            return (rank + " " + how).getBytes(StandardCharsets.UTF_8);
        }

        public static Departure decode(byte[] value) {
            String text = new String(value, StandardCharsets.UTF_8).trim();
            int space = text.indexOf(' ');
            try {
                int rank = Integer.parseInt(space < 0 ? text : text.substring(0, space));
                return new Departure(rank, space < 0 ? "departure published" : text.substring(space + 1));
            } catch (NumberFormatException e) {
                throw new StoreProtocolException("a departure key holds '" + text + "' instead of a rank");
            }
        }
    }
}
