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

    @Option(names = "--master-port", defaultValue = "0", description = "Store port; 0: rank 0's store binds a free one, which the other ranks are told.")
    int masterPort;

    @Option(names = "--nnodes", defaultValue = "${env:NNODES:-1}",
            description = "Nodes of the job, each running its own launch (default $NNODES, else 1); WORLD_SIZE = nodes x --nproc-per-node.")
    int nodes;

    @Option(names = "--node-rank", defaultValue = "${env:NODE_RANK:-0}",
            description = "This node's place among them, 0..nnodes-1 (default $NODE_RANK, else 0): its ranks are "
                    + "RANK node-rank x N .. node-rank x N + N - 1, LOCAL_RANK 0..N-1.")
    int nodeRank;

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
        if (nodes < 1 || nodeRank < 0 || nodeRank >= nodes) {
            System.err.println("symmem launch: --node-rank must be between 0 and --nnodes - 1 = " + (nodes - 1) + ", got "
                    + nodeRank + " (of --nnodes " + nodes + ")");
            return ExitStatus.CONFIG;
        }
        if (nodes > 1 && masterPort == 0 && System.getenv("SYMMEM_STORE") == null) {
            System.err.println("symmem launch: with --nnodes " + nodes + " every node must know where the store is: give "
                    + "--master-port (node 0's rank 0 serves the store there), or SYMMEM_STORE");
            return ExitStatus.CONFIG;
        }
        if ((long) nodes * ranks > io.symmem.config.SymmemConfigValidator.MAX_WORLD_SIZE) {
            System.err.println("symmem launch: --nnodes " + nodes + " x --nproc-per-node " + ranks + " = " + (long) nodes * ranks
                    + " ranks, more than the largest world (" + io.symmem.config.SymmemConfigValidator.MAX_WORLD_SIZE + ")");
            return ExitStatus.CONFIG;
        }
        LocalLauncher launcher = new LocalLauncher(ranks, masterAddr, masterPort,
                java.time.Duration.ofSeconds(graceSeconds), System.out).onNode(nodes, nodeRank);
        return launcher.run(command);
    }
}
