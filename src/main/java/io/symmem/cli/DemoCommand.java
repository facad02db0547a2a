package io.symmem.cli;

import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "demo", description = "Allocates a symmetric buffer, all-reduces random data, checks it and prints a table. Run one per rank (symmem launch -n 4 demo).")
public class DemoCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Option(names = "--sizes", split = ",", defaultValue = "4KiB,64KiB,1MiB,16MiB",
            converter = ByteSizeConverter.class, description = "Message sizes in bytes (KiB/MiB suffixes allowed; default ${DEFAULT-VALUE}).")
    List<Long> sizes;

    @Option(names = "--min-time-ms", defaultValue = "200", description = "Timed runs per size last at least this long (default ${DEFAULT-VALUE}).")
    int minTimeMs;

    @Option(names = "--bytes-of-rank", description = "Testing aid: rank R allocates N bytes instead (R=N), to see the size check fail.")
    java.util.Map<Integer, Long> bytesOfRank = java.util.Map.of();

    @Override
    public Integer call() {
        int rank = runtime.config().rank();
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            new AllReduceDemo(runtime, sizes, minTimeMs, bytesOfRank, System.out).run();
            return 0;
        } catch (RuntimeException e) {
            System.err.println("symmem demo: rank " + rank + " FAILED: " + e.getMessage());
            return 1;
        }
    }
}
