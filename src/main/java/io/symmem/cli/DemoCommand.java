package io.symmem.cli;

import io.symmem.cli.common.OutOfPlaceAlgorithmConverter;
import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.cli.common.DTypeConverter;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "demo", description = "Allocates a symmetric buffer, all-reduces random data (copied in from Java arrays), checks the result against a float64 reference and prints a table. Run one per rank (symmem launch -n 4 demo; SYMMEM_BACKEND=cuda for GPUs).")
public class DemoCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Option(names = "--sizes", split = ",", defaultValue = "4KiB,64KiB,1MiB,16MiB",
            converter = ByteSizeConverter.class, description = "Message sizes: bytes, or with a unit: KiB/MiB/GiB/TiB "
                    + "(1024^n) or KB/MB/GB/TB (1000^n), e.g. 1MiB (default ${DEFAULT-VALUE}).")
    List<Long> sizes;

    @Option(names = "--min-time-ms", defaultValue = "200", description = "Timed runs per size last at least this long (default ${DEFAULT-VALUE}).")
    int minTimeMs;

    @Option(names = "--dtype", defaultValue = "fp32", converter = DTypeConverter.class,
            description = "Element type: fp32, bf16 or fp16 (default ${DEFAULT-VALUE}).")
    DType dtype;

    @Option(names = "--algo", defaultValue = "auto", converter = OutOfPlaceAlgorithmConverter.class,
            description = "All-reduce algorithm: auto, one-shot or two-shot (default ${DEFAULT-VALUE}).")
    Algorithm algo;

    @Option(names = "--graph", description = "Capture each size's all-reduce once into a CUDA graph and run every check and timed run as a replay of it, on new input (cuda, nccl, nvshmem).")
    boolean graph;

    @Option(names = "--bytes-of-rank", converter = {RankConverter.class, ByteSizeConverter.class},
            description = "Testing aid: rank R allocates size N instead (R=N, N as in --sizes), to see the size check fail.")
    java.util.Map<Integer, Long> bytesOfRank = java.util.Map.of();

    /** The key of --bytes-of-rank (picocli takes one converter per map side: key, then value). */
    static class RankConverter implements picocli.CommandLine.ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return Integer.valueOf(value.trim());
        }
    }

    @Override
    public Integer call() {
        int rank = runtime.config().rank();
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            new AllReduceDemo(runtime, sizes, minTimeMs, bytesOfRank, dtype, algo, graph, System.out).run();
            return 0;
        } catch (RuntimeException e) {
            System.err.println("symmem demo: rank " + rank + " FAILED: " + e.getMessage());
            return 1;
        }
    }
}
