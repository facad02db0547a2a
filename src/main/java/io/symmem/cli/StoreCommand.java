package io.symmem.cli;

import io.quarkus.runtime.Quarkus;
import io.symmem.config.SymmemConfig;
import io.symmem.store.StoreLimits;
import io.symmem.store.server.StoreServer;
import io.symmem.store.server.StoreStats;
import io.symmem.world.StoreConnector;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "store", description = {
        "Serves the rendezvous store on its own (a sidecar, or a store shared by several runs) until stopped.",
        "It speaks PyTorch's TCPStore protocol, so ranks (SYMMEM_STORE_HOST=symmem) and PyTorch processes can both use it.",
        "Limits come from SYMMEM_STORE_MAX_KEY_BYTES, SYMMEM_STORE_MAX_VALUE_BYTES, SYMMEM_STORE_MAX_KEYS_PER_REQUEST."},
        footer = {"%nExample (a sidecar reachable from other machines):", "  symmem store --bind 0.0.0.0 --port 29500"})
public class StoreCommand implements Callable<Integer> {
    @Inject
    Vertx vertx;
    @Inject
    SymmemConfig config;

    @Option(names = "--bind", description = "Interface to listen on (default: MASTER_ADDR, 127.0.0.1 when unset; 0.0.0.0 for every interface).")
    String bind;

    @Option(names = "--port", description = "Port to listen on (default: MASTER_PORT, 29500 when unset).")
    Integer port;

    @Override
    public Integer call() {
        String host = bind != null ? bind : config.masterAddr();
        int listenPort = port != null ? port : config.masterPort();
        StoreLimits limits = StoreConnector.limits(config);
        StoreServer server = new StoreServer(vertx, limits);
        int bound;
        try {
            bound = server.listen(host, listenPort).await().atMost(Duration.ofSeconds(30));
        } catch (RuntimeException e) {
            System.err.println("symmem store: " + e.getMessage());
            return 1;
        }
        System.out.println("symmem store serving on " + host + ":" + bound + " (" + server.loopDescription() + "; limits: keys "
                + limits.maxKeyBytes() + " B, values " + limits.maxValueBytes() + " B, " + limits.maxKeysPerRequest()
                + " keys per request); stop it with SIGTERM");
        System.out.flush();
        Quarkus.waitForExit();
        report(server);
        return 0;
    }

    /** What the store held and served, printed as it stops; never fails the exit. */
    private static void report(StoreServer server) {
        try {
            StoreStats stats = server.stats().await().atMost(Duration.ofSeconds(5));
            System.out.println("symmem store stopping: " + stats.keys() + " keys, " + stats.connectionsAccepted()
                    + " connections accepted, " + stats.opsServed().values().stream().mapToLong(Long::longValue).sum()
                    + " requests served");
            server.stop().await().atMost(Duration.ofSeconds(5));
        } catch (RuntimeException e) {
            System.out.println("symmem store stopping: " + e.getMessage());
        }
    }
}
