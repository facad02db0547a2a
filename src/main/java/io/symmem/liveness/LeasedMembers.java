package io.symmem.liveness;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Member keys that live exactly as long as their rank's lease on the store (etcd): what the
 * {@link LivenessAgent} needs of them. A lease that expires removes the key and publishes nothing:
 * the survivors must notice the removal themselves.
 */
public interface LeasedMembers {

    /** Sets this rank's member key on its lease. */
    void hold(int rank, Duration timeout);

    /** Reports the rank of every member key removed from now on (deleted, or expired with its lease). */
    AutoCloseable watch(IntConsumer removed, Consumer<Throwable> failed);

    /** Hears when this rank's own lease was lost while it runs: its peers take it for gone. */
    void whenOwnLeaseLost(Consumer<String> listener);

    /** How long a dead rank's member key outlives it: the lease's TTL. */
    long ttlSeconds();
}
