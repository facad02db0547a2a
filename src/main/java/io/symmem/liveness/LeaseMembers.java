package io.symmem.liveness;

import io.symmem.store.LiveKeys;
import io.symmem.store.etcd.EtcdStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Member keys on etcd leases: a rank's member key lives on its store client's lease, which the client
 * keeps renewing; when the rank dies (or is cut off from the cluster) nobody renews the lease, etcd
 * drops it after its TTL and the key with it. Every rank watches the member keys, so the survivors
 * learn of a lost rank even when no collective is running. The watch only reports; the
 * {@link LivenessAgent} tells a departure from a rank that left in order and fails the world.
 */
public final class LeaseMembers implements LeasedMembers {

    private final EtcdStore store;
    private final String scope;

    /**
     * @param store the rank's etcd store client (its lease is the rank's)
     * @param scope what comes before {@link LiveKeys#MEMBER} in the keys (the run's prefix and '/', or "")
     */
    public LeaseMembers(EtcdStore store, String scope) {
        this.store = store;
        this.scope = scope;
    }

    @Override
    public void hold(int rank, Duration timeout) {
        store.setOnLease(scope + LiveKeys.member(rank), Integer.toString(rank).getBytes(StandardCharsets.US_ASCII))
                .await().atMost(timeout.plusSeconds(1));
    }

    @Override
    public AutoCloseable watch(IntConsumer removed, Consumer<Throwable> failed) {
        return store.watchRemovals(scope + LiveKeys.MEMBER, key -> {
            String inScope = key.substring(scope.length());
            if (LiveKeys.memberScope(inScope) != null) {
                removed.accept(LiveKeys.memberRank(inScope));
            }
        }, failed);
    }

    @Override
    public void whenOwnLeaseLost(Consumer<String> listener) {
        store.whenLeaseLost(listener);
    }

    @Override
    public long ttlSeconds() {
        return store.leaseTtlSeconds();
    }
}
