package io.symmem.cli;

import io.symmem.cli.bench.BenchCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

@Command(name = "symmem", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT,
        versionProvider = VersionProvider.class,
        description = "Symmetric memory for the JVM: rendezvous store, symmetric buffers, collectives.",
        subcommands = {LaunchCommand.class, ServeCommand.class, DemoCommand.class, ConfigCommand.class,
                BenchCommand.class, StoreCommand.class, StoreCheckCommand.class, ChaosCommand.class, NcclCheckCommand.class,
                ChaosRankCommand.class, StressCommand.class})
public class SymmemCommand {
}
