package io.symmem.cli.bench;

import io.symmem.store.Store;
import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/** A set of store clients, each with its own TCP connection, connected concurrently and closed together. */
final class BenchClients implements AutoCloseable {
    /** Connections opened at once: keeps the server's accept backlog from overflowing. */
    private static final int CONNECTS_IN_FLIGHT = 64;

    private final List<Store> clients;
    private final long connectNanos;

    private BenchClients(List<Store> clients, long connectNanos) {
        this.clients = clients;
        this.connectNanos = connectNanos;
    }

    /** Opens {@code n} connections to host:port; fails (closing those made) if any does not connect by the deadline. */
    static BenchClients connect(Vertx vertx, String host, int port, int n, Duration deadline,
                                TcpStoreClient.Options options) {
        long start = System.nanoTime();
        long end = start + deadline.toNanos();
        Semaphore slots = new Semaphore(CONNECTS_IN_FLIGHT);
        List<CompletableFuture<TcpStoreClient>> pending = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                if (!slots.tryAcquire(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("connecting " + n + " clients to " + host + ":" + port
                            + " did not finish within " + deadline.toSeconds() + " s (" + i + " started)");
                }
                Duration left = Duration.ofNanos(Math.max(1_000_000, end - System.nanoTime()));
                CompletableFuture<TcpStoreClient> f = TcpStoreClient.connect(vertx, host, port, left, options)
                        .subscribeAsCompletionStage();
                f.whenComplete((c, e) -> slots.release());
                pending.add(f);
            }
            List<Store> connected = new ArrayList<>(n);
            for (CompletableFuture<TcpStoreClient> f : pending) {
                connected.add(f.get(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS));
            }
            return new BenchClients(connected, System.nanoTime() - start);
        } catch (Exception e) {
            for (CompletableFuture<TcpStoreClient> f : pending) {
                f.thenAccept(TcpStoreClient::close);
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("could not connect " + n + " clients to " + host + ":" + port + ": "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        }
    }

    /**
     * Opens {@code n} blocking clients ({@link BlockingStoreClient}: each call runs on the caller's
     * thread, no event-loop hand-off), one after the other: a loopback connect takes microseconds.
     */
    static BenchClients connectBlocking(String host, int port, int n, Duration deadline, TcpStoreClient.Options options) {
        long start = System.nanoTime();
        long end = start + deadline.toNanos();
        List<Store> connected = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                Duration left = Duration.ofNanos(Math.max(1_000_000, end - System.nanoTime()));
                connected.add(BlockingStoreClient.connect(host, port, left, options));
            }
            return new BenchClients(connected, System.nanoTime() - start);
        } catch (RuntimeException e) {
            connected.forEach(Store::close);
            throw new IllegalStateException("could not connect " + n + " clients to " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /** Opens {@code n} clients of the store on etcd, one after the other (each its own gRPC channels). */
    static BenchClients connectEtcd(io.symmem.store.etcd.EtcdTarget target, int n, Duration requestTimeout) {
        long start = System.nanoTime();
        List<Store> connected = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                connected.add(io.symmem.store.etcd.EtcdStore.connect(target, requestTimeout));
            }
            return new BenchClients(connected, System.nanoTime() - start);
        } catch (RuntimeException e) {
            connected.forEach(Store::close);
            throw new IllegalStateException("could not connect " + n + " clients to " + target + ": " + e.getMessage(), e);
        }
    }

    Store get(int i) {
        return clients.get(i);
    }

    int size() {
        return clients.size();
    }

    double connectMillis() {
        return connectNanos / 1e6;
    }

    @Override
    public void close() {
        clients.forEach(Store::close);
    }
}
