package io.symmem.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "stress", description = "Many threads, overlapping groups, several buffers each: random collectives, "
        + "algorithms, dtypes and sizes from a seed, every result checked against float64; then misuse that must be "
        + "refused. Prints collectives/s, wrong results and stalls per rank (both must be 0). Run one per rank: "
        + "symmem launch -n 4 stress --seed 42 --collectives 10000. With --faults N instead: seeded fault rounds (late ranks"
        + " past the deadline, closes during calls, crossed allocations and pools, a second caller refused, --kill: a"
        + " rank killed), every result checked; run with SYMMEM_TIMEOUT_COLLECTIVE=1s.")
public class StressCommand implements Callable<Integer> {
    @Option(names = "--seed", defaultValue = "42", description = "Seed of the plan; every rank derives the same one (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--collectives", defaultValue = "10000", description = "Collectives in the whole plan, over every lane (default ${DEFAULT-VALUE}).")
    long collectives;

    @Option(names = "--threads", defaultValue = "6", description = "Lanes (threads), spread over the groups (default ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--buffers", defaultValue = "2", description = "Buffers per lane (default ${DEFAULT-VALUE}).")
    int buffers;

    @Option(names = "--faults", description = "Fault rounds instead of the random collectives: late ranks, closes during calls,"
            + " crossed allocations and pools, a second caller; prints the clean refusals, and FAULTS OK with no wrong result.")
    Integer faults;

    @Option(names = "--kill", description = "With --faults: a last round kills a rank (not 0) inside a collective; the others"
            + " must be told within seconds.")
    boolean kill;

    @Override
    public Integer call() {
        List<String> args = new ArrayList<>(List.of("--seed", Long.toString(seed), "--collectives", Long.toString(collectives),
                "--threads", Integer.toString(threads), "--buffers", Integer.toString(buffers)));
        if (faults != null) {
            args.addAll(List.of("--faults", Integer.toString(faults)));
        }
        if (kill) {
            args.add("--kill");
        }
        return io.symmem.stress.StressMain.run(args.toArray(String[]::new), System.out);
    }
}
