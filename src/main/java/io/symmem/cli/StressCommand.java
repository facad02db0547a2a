package io.symmem.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "stress", description = "Many threads, overlapping groups, several buffers each: random collectives, "
        + "algorithms, dtypes and sizes from a seed, every result checked against float64; then misuse that must be "
        + "refused. Prints collectives/s, wrong results and stalls per rank (both must be 0). Run one per rank: "
        + "symmem launch -n 4 stress --seed 42 --collectives 10000.")
public class StressCommand implements Callable<Integer> {
    @Option(names = "--seed", defaultValue = "42", description = "Seed of the plan; every rank derives the same one (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--collectives", defaultValue = "10000", description = "Collectives in the whole plan, over every lane (default ${DEFAULT-VALUE}).")
    long collectives;

    @Option(names = "--threads", defaultValue = "6", description = "Lanes (threads), spread over the groups (default ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--buffers", defaultValue = "2", description = "Buffers per lane (default ${DEFAULT-VALUE}).")
    int buffers;

    @Override
    public Integer call() {
        List<String> args = new ArrayList<>(List.of("--seed", Long.toString(seed), "--collectives", Long.toString(collectives),
                "--threads", Integer.toString(threads), "--buffers", Integer.toString(buffers)));
        return io.symmem.stress.StressMain.run(args.toArray(String[]::new), System.out);
    }
}
