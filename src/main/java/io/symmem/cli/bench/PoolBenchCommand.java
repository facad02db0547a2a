package io.symmem.cli.bench;

import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.cli.common.DTypeConverter;
import io.symmem.cli.common.ExitStatus;
import io.symmem.collective.DType;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code symmem bench pool}: the memory pool's costs, one process per rank (symmem launch -n 2 bench
 * pool).
 */
@Command(name = "pool", description = "Memory pool: (1) a warm allocate+close pair from Java, median and p99 over"
        + " --pairs pairs timed one by one, beside a plain symmetric allocation with rendezvous; (2) --cycles random"
        + " allocate/close cycles (same seed on every rank, as pool allocation is collective): figures, open fds and"
        + " live windows before and after; (3) all-reduce on a pool block against a dedicated buffer, per size."
        + " Run one per rank: symmem launch -n 2 bench pool.")
public class PoolBenchCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Option(names = "--pair-size", defaultValue = "64KiB", converter = ByteSizeConverter.class,
            description = "Block size of the warm pairs (default ${DEFAULT-VALUE}).")
    long pairSize;

    @Option(names = "--pairs", defaultValue = "100000", description = "Warm pairs timed (default ${DEFAULT-VALUE}).")
    int pairs;

    @Option(names = "--rendezvous", defaultValue = "20", description = "Plain symmetric allocations timed (default ${DEFAULT-VALUE}).")
    int rendezvous;

    @Option(names = "--cycles", defaultValue = "100000", description = "Random allocate/close cycles (default ${DEFAULT-VALUE}).")
    int cycles;

    @Option(names = "--max-live", defaultValue = "64", description = "Most blocks live at once in the cycles (default ${DEFAULT-VALUE}).")
    int maxLive;

    @Option(names = "--max-block", defaultValue = "1MiB", converter = ByteSizeConverter.class,
            description = "Largest random block of the cycles (default ${DEFAULT-VALUE}).")
    long maxBlock;

    @Option(names = "--sizes", split = ",", converter = ByteSizeConverter.class, defaultValue = "4KiB,64KiB,1MiB,16MiB",
            description = "All-reduce sizes (default ${DEFAULT-VALUE}); empty list skips the all-reduce part.")
    List<Long> sizes;

    @Option(names = "--dtype", converter = DTypeConverter.class, description = "fp32, bf16 or fp16 (default: bf16 on GPUs, fp32 on host).")
    DType dtype;

    @Option(names = "--min-time-ms", defaultValue = "50", description = "Target time of one all-reduce measurement (default ${DEFAULT-VALUE}).")
    int minTimeMs;

    @Option(names = "--repeats", defaultValue = "5",
            description = "All-reduce measurements per size and kind, alternating pool and dedicated; the median is shown (default ${DEFAULT-VALUE}).")
    int repeats;

    @Override
    public Integer call() {
        int rank = runtime.config().rank();
        if (pairs < 1 || rendezvous < 1 || cycles < 0 || maxLive < 1 || maxBlock < 1 || repeats < 1 || minTimeMs < 1) {
            System.err.println("symmem bench pool: --pairs, --rendezvous, --max-live, --max-block, --repeats and"
                    + " --min-time-ms must be positive and --cycles >= 0");
            return ExitStatus.CONFIG;
        }
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            DType type = dtype != null ? dtype : runtime.backend().isDevice() ? DType.BFLOAT16 : DType.FLOAT32;
            new PoolBenchRunner(runtime, new PoolBenchRunner.Settings(pairSize, pairs, rendezvous, cycles, maxLive, maxBlock,
                    sizes, type, minTimeMs, repeats), System.out).run();
            return 0;
        } catch (RuntimeException e) {
            System.err.println("symmem bench pool: rank " + rank + " FAILED: " + e);
            return 1;
        }
    }
}
