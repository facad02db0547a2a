package io.symmem.cli;

import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "store-check", description = {
        "Checks a store server (symmem's or PyTorch's TCPStore) against every operation of symmem's Store.",
        "Each runs through symmem's client with exact expected results; prints one line per check and \"N passed, M failed\"."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:every check passed", "1:a check failed", "3:no check failed, but the server does not support some " +
                "(PyTorch's legacy TCPStore server closes the connection on queue queries)"},
        footer = {"%nExample (a PyTorch TCPStore server on port 29700):", "  symmem store-check --host 127.0.0.1 --port 29700"})
public class StoreCheckCommand implements Callable<Integer> {
    /** Nothing failed, but some checks could not run on this server. */
    static final int EXIT_ONLY_UNSUPPORTED = 3;

    @Inject
    Vertx vertx;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Store host (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", required = true, description = "Store port.")
    int port;

    @Override
    public Integer call() {
        System.out.println("symmem store-check against " + host + ":" + port);
        StoreCheck check = new StoreCheck(vertx, host, port, System.out);
        int notPassed = check.run();
        if (notPassed == 0) {
            return 0;
        }
        return notPassed == check.unsupported() ? EXIT_ONLY_UNSUPPORTED : 1;
    }
}
