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
 * How a rank reaches a store over TCP: MASTER_ADDR:MASTER_PORT, talked to as SYMMEM_STORE_HOST says; and
 * what a rank shares with `symmem store` (the limits, the port file).
 */
public final class StoreConnector {
    private final SymmemConfig config;
    private final Vertx vertx;

    StoreConnector(SymmemConfig config, Vertx vertx) {
        this.config = config;
        this.vertx = vertx;
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
        return TcpStoreClient.connect(vertx, config.masterAddr(), config.masterPort(), storeTimeout,
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
