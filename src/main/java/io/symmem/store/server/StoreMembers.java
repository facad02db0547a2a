package io.symmem.store.server;

import io.symmem.store.LiveKeys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Ephemeral member keys ({@link LiveKeys}): which connection set which member key, and the departure
 * published when such a connection closes while its key still exists. This is how the store tells
 * every rank at once that a peer's process has ended (the kernel closes a killed process's sockets),
 * instead of each rank finding out at the end of its own deadline. Confined to the server's context,
 * like {@link StoreState}.
 */
final class StoreMembers {
    private static final Logger LOG = Logger.getLogger(StoreMembers.class);

    private final StoreState state;
    private final Map<String, Object> ownerByKey = new HashMap<>();
    private final Map<Object, Set<String>> keysByOwner = new IdentityHashMap<>();

    StoreMembers(StoreState state) {
        this.state = state;
    }

    /** A SET of {@code key} by {@code owner} was applied: a member key now belongs to that connection. */
    void onSet(Object owner, String key) {
        if (LiveKeys.memberScope(key) == null) {
            return;
        }
        Object previous = ownerByKey.put(key, owner);
        if (previous != null && previous != owner) {
            Set<String> theirs = keysByOwner.get(previous);
            if (theirs != null) {
                theirs.remove(key);
            }
        }
        keysByOwner.computeIfAbsent(owner, o -> new LinkedHashSet<>()).add(key);
    }

    /**
     * {@code owner}'s connection closed: each member key it still owns and that still exists is
     * deleted and published as a departure. Returns the member keys that departed.
     */
    List<String> onClosed(Object owner, String remote) {
        Set<String> owned = keysByOwner.remove(owner);
        if (owned == null) {
            return List.of();
        }
        List<String> departed = new ArrayList<>();
        for (String key : owned) {
            ownerByKey.remove(key);
            if (!state.delete(key)) {
                continue; // deleted before: the rank left in order
            }
            String scope = LiveKeys.memberScope(key);
            int rank = LiveKeys.memberRank(key);
            long n = state.add(scope + LiveKeys.EVENTS, 1);
            state.set(scope + LiveKeys.event(n),
                    LiveKeys.WorldRecord.gone(rank, "its connection to the store closed without leaving").encode());
            LOG.warnf("store: rank %d%s is gone (its connection from %s closed without leaving); departure %d published",
                    rank, scope.isEmpty() ? "" : " of '" + scope + "'", remote, n);
            departed.add(key);
        }
        return departed;
    }

    int size() {
        return ownerByKey.size();
    }
}
