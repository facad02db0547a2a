package io.symmem.cli.bench;

import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.time.Duration;

/** Serves a store and nothing else, until the process is stopped or the time is up. */
final class BenchServeOnly {
    private final Vertx vertx;
    private final String bind;
    private final int port;
    private final Duration serveFor;
    private final PrintStream out;

    BenchServeOnly(Vertx vertx, String bind, int port, Duration serveFor, PrintStream out) {
        this.vertx = vertx;
        this.bind = bind;
        this.port = port;
        this.serveFor = serveFor;
        this.out = out;
    }

    int run() throws InterruptedException {
        StoreServer server = new StoreServer(vertx, bind, port);
        int bound = server.start().await().atMost(Duration.ofSeconds(30));
        out.println("symmem store serving on " + bind + ":" + bound + " for at most " + serveFor.toSeconds()
                + " s (stop it with SIGTERM)");
        out.flush();
        try {
            Thread.sleep(serveFor.toMillis());
        } finally {
            server.stop().await().atMost(Duration.ofSeconds(30));
        }
        return 0;
    }
}
