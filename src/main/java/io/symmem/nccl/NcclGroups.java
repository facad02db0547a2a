package io.symmem.nccl;

import io.symmem.nativ.NativeBuffer;
import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The NCCL communicators of one rank's groups, for the nccl backend: the world's is made when the
 * rank joins, another group's the first time a buffer of that group is registered (collective over
 * that group, bootstrapped through the store). Closing closes them all.
 */
public final class NcclGroups implements AutoCloseable {
    private final int device;
    private final Duration collectiveTimeout;
    private final Map<String, NcclCommunicator> byGroup = new LinkedHashMap<>();

    public NcclGroups(int device, Duration collectiveTimeout) {
        this.device = device;
        this.collectiveTimeout = collectiveTimeout;
    }

    /** The communicator of {@code group}, made now (collective over the group) if it has none yet. */
    public synchronized NcclCommunicator communicator(StoreExchange group, Duration deadline) {
        String key = key(group);
        NcclCommunicator c = byGroup.get(key);
        if (c == null || c.isClosed() || c.isAborted()) {
            if (c != null) {
                c.close();
            }
            c = NcclCommunicator.create(group, device, deadline, collectiveTimeout);
            byGroup.put(key, c);
        }
        return c;
    }

    /** Registers {@code buffer} with the communicator of {@code group} (collective over the group). */
    public NcclWindow register(StoreExchange group, NativeBuffer buffer, Duration deadline) {
        return communicator(group, deadline).registerWindow(buffer);
    }

    public synchronized List<NcclCommunicator> communicators() {
        return List.copyOf(byGroup.values());
    }

    /** Closes every communicator; the first failure is thrown after all were tried. */
    @Override
    public synchronized void close() {
        RuntimeException first = null;
        for (NcclCommunicator c : new ArrayList<>(byGroup.values())) {
            try {
                c.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        byGroup.clear();
        if (first != null) {
            throw first;
        }
    }

    private static String key(StoreExchange group) {
        return group.groupName() + "/" + group.worldSize();
    }
}
