package io.symmem.cli;

import io.symmem.cli.common.ExitStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "launch", description = {"Starts N local ranks of a symmem command, the way torchrun does.",
        "The ranks' HTTP and management ports (SYMMEM_HTTP_PORT, SYMMEM_MANAGEMENT_PORT + LOCAL_RANK) move to free "
                + "blocks when the defaults are taken, so that two launches run side by side; a block set by the user must be free."},
        footer = "%nExample: symmem launch --nproc-per-node 4 demo")
public class LaunchCommand implements Callable<Integer> {
    @Option(names = {"-n", "--nproc-per-node"}, defaultValue = "4", description = "Ranks to start (default ${DEFAULT-VALUE}).")
    int ranks;

    @Option(names = "--master-addr", defaultValue = "127.0.0.1", description = "Store host (default ${DEFAULT-VALUE}).")
    String masterAddr;

    @Option(names = "--master-port", defaultValue = "0", description = "Store port; 0: rank 0's store binds a free one, which the other ranks are given.")
    int masterPort;

    @Option(names = "--grace-period", defaultValue = "10", description = "Seconds the other ranks get to stop after one fails (default ${DEFAULT-VALUE}).")
    int graceSeconds;

    @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The symmem command each rank runs, with its arguments (e.g. demo).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        if (ranks < 1 || ranks > 64) {
            System.err.println("symmem launch: --nproc-per-node must be between 1 and 64, got " + ranks);
            return ExitStatus.CONFIG;
        }
        LocalLauncher launcher = new LocalLauncher(ranks, masterAddr, masterPort,
                java.time.Duration.ofSeconds(graceSeconds), System.out);
        return launcher.run(command);
    }
}
