package io.symmem.world;

import io.smallrye.mutiny.Uni;
import io.symmem.config.StoreHost;
import io.symmem.config.SymmemConfig;
import io.symmem.store.StoreLimits;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * How a rank reaches a store over TCP: MASTER_ADDR:MASTER_PORT, talked to as SYMMEM_STORE_HOST says (with
 * MASTER_PORT=0, the port rank 0 publishes in SYMMEM_STORE_PORT_FILE); and what a rank shares with
 * `symmem store` (the limits, the port file).
 */
public final class StoreConnector {
    private final SymmemConfig config;
    private final Vertx vertx;
    private volatile int port;

    StoreConnector(SymmemConfig config, Vertx vertx) {
        this.config = config;
        this.vertx = vertx;
        this.port = config.masterPort();
    }

    /**
     * Starts the store this rank hosts, bound to MASTER_ADDR:MASTER_PORT, and publishes its port where
     * SYMMEM_STORE_PORT_FILE asks; a server that could not bind is closed again (there is nothing for the
     * other ranks to reach).
     */
    io.symmem.store.server.StoreServer host(Duration timeout) throws IOException {
        io.symmem.store.server.StoreServer hosting = new io.symmem.store.server.StoreServer(vertx, limits(config));
        int bound;
        try {
            bound = hosting.listen(config.masterAddr(), config.masterPort()).await().atMost(timeout);
        } catch (RuntimeException notBound) {
            hosting.close();
            throw notBound;
        }
        if (config.store().portFile().isPresent()) {
            publishPort(Path.of(config.store().portFile().get()), bound);
        }
        return hosting;
    }

    /** The store's port: MASTER_PORT, or the one read by {@link #awaitPublishedPort}; 0 before that. */
    int port() {
        return port;
    }

    /**
     * With MASTER_PORT=0 on a rank that connects to rank 0's store: waits for the port rank 0 publishes in
     * SYMMEM_STORE_PORT_FILE (rank 0 may still be starting; a launcher starts every rank at once).
     */
    void awaitPublishedPort(Duration timeout) throws IOException {
        if (port != 0 || config.store().portFile().isEmpty()) {
            return;
        }
        Path file = Path.of(config.store().portFile().get());
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("rank " + config.rank() + ": rank 0 published no store port in "
                        + "SYMMEM_STORE_PORT_FILE=" + file + " within " + timeout + " (SYMMEM_TIMEOUT_STORE): is rank 0 "
                        + "running? Or give MASTER_PORT");
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for rank 0's store port in " + file, e);
            }
        }
        port = Integer.parseInt(Files.readString(file).trim());
    }

    /** A new connection to the store, within the store deadline. */
    TcpStoreClient connect(Duration storeTimeout) {
        return connectAsync(storeTimeout).await().atMost(storeTimeout.plusSeconds(5));
    }

    Uni<TcpStoreClient> connectAsync(Duration storeTimeout) {
        // Our StoreServer (rank 0's, or a `symmem store`) holds requests behind a pending WAIT, so a get
        // is one round trip (WAIT+GET in one write); any other TCPStore server gets one request at a time.
        TcpStoreClient.Options options = config.store().host() == StoreHost.TCPSTORE
                ? TcpStoreClient.Options.defaults() : TcpStoreClient.Options.forSymmemServer();
        return TcpStoreClient.connect(vertx, config.masterAddr(), port, storeTimeout,
                options.withLimits(limits(config)));
    }

    /** The store limits the configuration asks for (SYMMEM_STORE_MAX_*): a rank's, and `symmem store`'s. */
    public static StoreLimits limits(SymmemConfig config) {
        return new StoreLimits(config.store().maxKeyBytes(), config.store().maxValueBytes(), config.store().maxKeysPerRequest());
    }

    /**
     * Writes the store's port to {@code file} (SYMMEM_STORE_PORT_FILE) in one step: written beside it, then
     * renamed over it, so that a reader polling for the file never reads it half written.
     */
    static void publishPort(Path file, int port) throws IOException {
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        Files.writeString(partial, port + "\n");
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
