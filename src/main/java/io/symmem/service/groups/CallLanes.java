package io.symmem.service.groups;

import io.symmem.service.http.ApiProblem;
import io.symmem.store.StoreExchange;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The lanes of one group's HTTP collectives on this member. Calls pair across members by order, so
 * nothing on one member could tell which of two concurrent callers a peer's call belongs to: a lane
 * takes one call at a time and refuses a second at once (409, naming the call in flight). Callers that
 * need to run at once each pass their own {@code ?tag=}: a tag is a lane of its own with its own
 * sequence of rounds (the exchange {@code <group>:tag:<tag>}), so tag A on one member pairs only with
 * tag A on the others.
 */
public final class CallLanes {
    /** More tags than this on one group is a caller making a tag per call, which the store would keep for ever. */
    public static final int MAX_TAGS = 256;
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private final String groupName;
    private final Lane untagged;
    private final Function<String, StoreExchange> exchangeOfTag;
    private final Map<String, Lane> tagged = new ConcurrentHashMap<>();

    /** {@code exchangeOfTag} makes the exchange of a tag's lane, the first time the tag is used. */
    public CallLanes(String groupName, StoreExchange untagged, Function<String, StoreExchange> exchangeOfTag) {
        this.groupName = Objects.requireNonNull(groupName);
        this.untagged = new Lane(null, Objects.requireNonNull(untagged));
        this.exchangeOfTag = Objects.requireNonNull(exchangeOfTag);
    }

    /** The name of a tag's exchange: ':' is in no group name, so it never meets a group's. */
    public static String exchangeName(String groupName, String tag) {
        return groupName + ":tag:" + tag;
    }

    /** The lane without a tag: the group's own exchange, which Java members of the group use too. */
    public Lane untagged() {
        return untagged;
    }

    /** The lane of {@code tag} (null: the untagged lane); a tag that is not allowed is a 400 naming it. */
    public Lane lane(String tag) {
        if (tag == null) {
            return untagged;
        }
        if (!TAG.matcher(tag).matches()) {
            throw new ApiProblem(400, "?tag=" + tag + " is not allowed: use 1 to 64 of A-Z a-z 0-9 . _ -");
        }
        Lane lane = tagged.get(tag);
        if (lane != null) {
            return lane;
        }
        synchronized (tagged) {
            if (tagged.size() >= MAX_TAGS && !tagged.containsKey(tag)) {
                throw new ApiProblem(400, "group '" + groupName + "' has " + MAX_TAGS + " tags already; a tag names a caller"
                        + " that runs beside others (a thread, a worker), not a call: use the same tags again");
            }
            return tagged.computeIfAbsent(tag, t -> new Lane(t, exchangeOfTag.apply(t)));
        }
    }

    /** One sequence of rounds: its exchange, and the call in flight on it here (null when none). */
    public final class Lane {
        private final String tag;
        private final StoreExchange exchange;
        private final AtomicReference<String> inFlight = new AtomicReference<>();

        private Lane(String tag, StoreExchange exchange) {
            this.tag = tag;
            this.exchange = exchange;
        }

        public StoreExchange exchange() {
            return exchange;
        }

        /**
         * Takes the lane for {@code op} on {@code rank}, or answers 409 naming the call that holds it.
         * The caller must {@link #release()} it on every way out.
         */
        public void take(String op, int rank) {
            String call = op + (tag == null ? "" : " (tag " + tag + ")") + " of round " + exchange.rounds()
                    + ", started " + Instant.now();
            String holder = inFlight.compareAndExchange(null, call);
            if (holder != null) {
                throw new ApiProblem(409, "group '" + groupName + "'" + (tag == null ? "" : " tag '" + tag + "'") + " on rank " + rank
                        + " already has a call in flight (" + holder + "), so this " + op + " is refused: calls pair across"
                        + " members by order, and a second caller here could pair with the first one's peers. Wait for"
                        + " the call in flight, or give each concurrent caller its own ?tag=");
            }
        }

        public void release() {
            inFlight.set(null);
        }
    }
}
