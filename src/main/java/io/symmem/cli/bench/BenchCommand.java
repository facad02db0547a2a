package io.symmem.cli.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "bench", description = "Benchmarks: store, store-hostile, allreduce, pool, http and startup, each described below.",
        subcommands = {BenchStoreCommand.class, BenchStoreHostileCommand.class, AllReduceBenchCommand.class, PoolBenchCommand.class,
            HttpBenchCommand.class, StartupBenchCommand.class})
public class BenchCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a benchmark, e.g. `symmem bench store`");
    }
}
