package io.symmem.cli.bench;

import io.symmem.cli.common.AlgorithmConverter;
import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.cli.common.DTypeConverter;
import io.symmem.cli.common.ExitStatus;
import io.symmem.cli.common.ReduceOpConverter;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code symmem bench allreduce}: all-reduce latency and bus bandwidth through the Java API, one
 * process per rank (symmem launch -n 4 bench allreduce).
 */
@Command(name = "allreduce", description = "All-reduce latency per size and algorithm through the Java API (bf16 sum by default),"
        + " timed as the native NCCL bench times it: warm-up, then --rounds rounds of N back-to-back launches on one stream"
        + " and a synchronize; a round's time per op = elapsed / N (System.nanoTime) on the slowest rank, the fastest round"
        + " kept. Run one per rank: symmem launch -n 4 bench allreduce.")
public class AllReduceBenchCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Option(names = "--min-size", defaultValue = "4KiB", converter = ByteSizeConverter.class,
            description = "Smallest size (bytes, or with a unit: KiB/MiB/GiB/TiB = 1024^n, KB/MB/GB/TB = 1000^n); sizes "
                    + "double up to --max-size (default ${DEFAULT-VALUE}).")
    long minSize;

    @Option(names = "--max-size", defaultValue = "256MiB", converter = ByteSizeConverter.class,
            description = "Largest size, written as --min-size (default ${DEFAULT-VALUE}).")
    long maxSize;

    @Option(names = "--sizes", split = ",", converter = ByteSizeConverter.class,
            description = "Explicit sizes, written as --min-size, instead of the doublings from --min-size to --max-size.")
    List<Long> sizes;

    @Option(names = "--dtype", defaultValue = "bf16", converter = DTypeConverter.class,
            description = "fp32, bf16 or fp16 (default ${DEFAULT-VALUE}).")
    DType dtype;

    @Option(names = "--op", defaultValue = "sum", converter = ReduceOpConverter.class,
            description = "sum, avg, max or min (default ${DEFAULT-VALUE}).")
    ReduceOp op;

    @Option(names = "--algos", split = ",", defaultValue = "one-shot,two-shot,auto", converter = AlgorithmConverter.class,
            description = "Algorithms (default ${DEFAULT-VALUE}).")
    List<Algorithm> algos;

    @Option(names = "--in-place", description = "Reduce in place instead of into local device memory.")
    boolean inPlace;

    @Option(names = "--iters", defaultValue = "0", description = "Launches per round; 0 = enough to fill --min-time-ms (10.." + CollectiveBenchRunner.MAX_LAUNCHES + ").")
    int iters;

    @Option(names = "--min-time-ms", defaultValue = "100", description = "Target time of one round when --iters is 0 (default"
            + " ${DEFAULT-VALUE}, as the native NCCL bench).")
    int minTimeMs;

    @Option(names = "--rounds", defaultValue = "2", description = "Timed rounds per measurement, the fastest kept (default"
            + " ${DEFAULT-VALUE}, as the native NCCL bench).")
    int rounds;

    @Option(names = "--warmup", defaultValue = "10", description = "Untimed launches before each measurement (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--warmup-ms", defaultValue = "20", description = "Then untimed launches filling this long, so that the"
            + " JIT has compiled the call path before the rounds (default ${DEFAULT-VALUE}; 0 = none).")
    int warmupMs;

    @Option(names = "--json", description = "Also write the results as JSON here (rank 0).")
    Path json;

    @Option(names = "--nccl", description = "Also time NCCL's allReduce through symmem's Java API: in place on plain device"
            + " memory (column nccl) and on the bench's symmetric buffer registered as an NCCL symmetric window (nccl-window),"
            + " and out of place into a second buffer of each kind (nccl-oop, nccl-window-oop); beside each, the same calls"
            + " made by NCCL's own C loop in this process (nccl-c, nccl-window-c, ...), so that what a Java call adds shows"
            + " apart from the process. Needs a GPU backend and NCCL (2.27+ for the window).")
    boolean nccl;

    @Override
    public Integer call() {
        int rank = runtime.config().rank();
        CollectiveBenchRunner.Settings settings;
        try {
            List<Long> list = sizes != null && !sizes.isEmpty() ? sizes : powersOfTwo(minSize, maxSize);
            settings = new CollectiveBenchRunner.Settings(list, dtype, op, algos, inPlace, iters, minTimeMs, warmup, warmupMs,
                    rounds, json, nccl);
            CollectiveBenchRunner.plan(settings);  // a bad plan is refused before the ranks start
        } catch (IllegalArgumentException e) {
            System.err.println("symmem bench allreduce: " + e.getMessage());
            return ExitStatus.CONFIG;
        }
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            new CollectiveBenchRunner(runtime, settings, System.out).run();
            return 0;
        } catch (RuntimeException e) {
            System.err.println("symmem bench allreduce: rank " + rank + " FAILED: " + e.getMessage());
            return 1;
        }
    }

    static List<Long> powersOfTwo(long min, long max) {
        if (min <= 0 || max < min) {
            throw new IllegalArgumentException("--min-size " + min + " and --max-size " + max + " must satisfy 0 < min <= max");
        }
        List<Long> list = new ArrayList<>();
        // Stop before doubling past max: with sizes up to TiB and beyond, s * 2 could overflow.
        for (long s = min; ; s *= 2) {
            list.add(s);
            if (s > max / 2) {
                return list;
            }
        }
    }
}
