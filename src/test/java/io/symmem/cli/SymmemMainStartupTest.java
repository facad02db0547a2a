package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.cli.SymmemMain.Startup;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Which startup a command line gets, decided by picocli's parse of the command tree, not by its words. */
class SymmemMainStartupTest {
    private static Startup of(String line) {
        return SymmemMain.startupOf(line.isEmpty() ? new String[0] : line.split(" "));
    }

    @Test
    void ranksAreServeDemoChaosRankAndTheCollectiveBenches() {
        assertThat(of("serve")).isEqualTo(Startup.RANK);
        assertThat(of("demo --dtype bf16 --sizes 4KiB,1MiB")).isEqualTo(Startup.RANK);
        assertThat(of("chaos-rank --phase idle")).isEqualTo(Startup.RANK);
        assertThat(of("bench allreduce --min-size 4KiB")).isEqualTo(Startup.RANK);
        assertThat(of("bench pool --pairs 10")).isEqualTo(Startup.RANK);
    }

    @Test
    void storeTakesTheRankConfigurationAndConfigRunsWithoutQuarkus() {
        assertThat(of("store --port 29501")).isEqualTo(Startup.CONFIGURED);
        assertThat(of("config")).isEqualTo(Startup.WITHOUT_QUARKUS);
        assertThat(of("config --help")).isEqualTo(Startup.WITHOUT_QUARKUS);
    }

    @Test
    void launchRunsWithoutQuarkusAndEverythingElseIsPlain() {
        assertThat(of("launch -n 4 demo")).isEqualTo(Startup.LAUNCHER);
        assertThat(of("launch demo --dtype bf16")).isEqualTo(Startup.LAUNCHER);
        assertThat(of("launch -n 2 bench allreduce")).isEqualTo(Startup.LAUNCHER);
        for (String line : new String[] {"", "--help", "-h", "--version", "-V", "bench store --clients 1", "bench",
                "store-check --port 1", "chaos --rounds 1",
                "nccl-check info", "frobnicate", "--bogus serve"}) {
            assertThat(of(line)).as(line).isEqualTo(Startup.PLAIN);
        }
    }

    @Test
    void aCommandWithWrongArgumentsStartsAsItselfAndReportsTheMistakeThere() {
        assertThat(of("demo --bogus")).isEqualTo(Startup.RANK);
        assertThat(of("demo --dtype fp8")).isEqualTo(Startup.RANK);
        assertThat(of("bench allreduce extra")).isEqualTo(Startup.RANK);
        assertThat(of("store --port nope")).isEqualTo(Startup.CONFIGURED);
        assertThat(of("config --bogus")).isEqualTo(Startup.WITHOUT_QUARKUS);
        assertThat(of("bench --bogus allreduce")).isEqualTo(Startup.PLAIN);
        assertThat(of("serve --bogus")).isEqualTo(Startup.RANK);
        assertThat(of("serve --help")).isEqualTo(Startup.RANK);
        assertThat(of("launch --bogus")).isEqualTo(Startup.LAUNCHER);
    }

    @Test
    void serveTakesNoOptionsSoABareServeNeedsNoParse() {
        // SymmemMain.run starts a bare `serve` without picocli; an option added to it would be left at its
        // Java default there, never at the default its annotation gives.
        CommandLine.Model.CommandSpec serve = SymmemMain.commandLine(CommandLine.defaultFactory()).getSubcommands().get("serve").getCommandSpec();
        assertThat(serve.options()).as("serve's options other than --help and --version")
                .filteredOn(o -> !o.usageHelp() && !o.versionHelp()).isEmpty();
        assertThat(serve.positionalParameters()).as("serve's parameters").isEmpty();
        assertThat(serve.subcommands()).as("serve's subcommands").isEmpty();
    }

    @Test
    void theTreeHasEveryBenchAndLaunchKeepsItsCommandsArguments() {
        CommandLine tree = SymmemMain.commandLine(CommandLine.defaultFactory());
        assertThat(tree.getSubcommands().get("bench").getSubcommands()).containsOnlyKeys("store", "store-hostile", "allreduce", "pool", "http", "startup");
        LaunchCommand launch = tree.parseArgs("launch", "-n", "2", "demo", "--help").subcommand().commandSpec().commandLine()
                .getCommand();
        assertThat(launch.ranks).isEqualTo(2);
        assertThat(launch.command).containsExactly("demo", "--help");
    }
}
