package io.symmem.cli.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(name = "bench", description = "Benchmarks (bench store: the rendezvous store; bench store-hostile: the store under slow and hostile clients).",
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
