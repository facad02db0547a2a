package io.symmem.store.etcd;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The lease of one store client, kept alive as long as the client is: keys put on it (receipts of
 * once-only writes, a rank's member key) disappear when the process dies, after the lease's TTL,
 * because nobody renews it any more. Granted on first use. If the lease is lost while the process
 * lives (the cluster was out of reach for longer than the TTL), the listeners hear of it, and the next
 * use grants a new one.
 */
final class SessionLease implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SessionLease.class);

    private final Lease leases;
    private final long ttlSeconds;
    private final String storeName;
    private final List<Consumer<String>> lostListeners = new CopyOnWriteArrayList<>();
    private CompletableFuture<Long> current;
    private CloseableClient keepAlive;
    private boolean closed;

    /** @param ttl how long after the last renewal the cluster drops the lease (whole seconds, at least 1) */
    SessionLease(Lease leases, Duration ttl, String storeName) {
        this.leases = leases;
        this.ttlSeconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        this.storeName = storeName;
    }

    long ttlSeconds() {
        return ttlSeconds;
    }

    /** The lease's id, granting it first if there is none (or the last one was lost). */
    synchronized CompletableFuture<Long> id() {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException("etcd store " + storeName + " is closed"));
        }
        if (current == null || current.isCompletedExceptionally()) {
            CompletableFuture<Long> granting = leases.grant(ttlSeconds).thenApply(r -> r.getID());
            current = granting;
            granting.thenAccept(this::keepAlive);
        }
        return current;
    }

    /** Hears, once per lost lease, why it was lost; the process's keys on it are gone from the store. */
    void whenLost(Consumer<String> listener) {
        lostListeners.add(listener);
    }

    private synchronized void keepAlive(long id) {
        if (closed) {
            return;
        }
        keepAlive = leases.keepAlive(id, new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveResponse response) {
                // renewed
            }

            @Override
            public void onError(Throwable error) {
                lost(id, "the lease " + Long.toHexString(id) + " expired or could not be renewed: " + EtcdFailures.describe(error));
            }

            @Override
            public void onCompleted() {
                lost(id, "the lease " + Long.toHexString(id) + " is no longer renewed");
            }
        });
    }

    private void lost(long id, String why) {
        synchronized (this) {
            if (closed || current == null || current.getNow(-1L) != id) {
                return;
            }
            current = null;
            if (keepAlive != null) {
                keepAlive.close();
                keepAlive = null;
            }
        }
        LOG.warnf("etcd store %s: %s", storeName, why);
        for (Consumer<String> listener : lostListeners) {
            listener.accept(why);
        }
    }

    /** Stops renewing without revoking: the lease runs out after its TTL, as when the process dies. */
    synchronized void abandon() {
        closed = true;
        if (keepAlive != null) {
            keepAlive.close();
        }
    }

    /** Stops renewing and revokes the lease, so that its keys go at once rather than after the TTL. */
    @Override
    public void close() {
        CompletableFuture<Long> held;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            held = current;
            if (keepAlive != null) {
                keepAlive.close();
            }
        }
        if (held != null && held.isDone() && !held.isCompletedExceptionally()) {
            try {
                leases.revoke(held.join()).get(2, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.debugf("etcd store %s: lease not revoked (%s); it expires after %d s", storeName, e.getMessage(), ttlSeconds);
            }
        }
    }
}
