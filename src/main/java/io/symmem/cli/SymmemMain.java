package io.symmem.cli;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import io.symmem.cli.bench.AllReduceBenchCommand;
import io.symmem.cli.bench.PoolBenchCommand;
import io.symmem.config.ConfigVariable;
import io.symmem.config.SymmemConfigLoader;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;

/**
 * Entry point of the symmem command. Three things happen before Quarkus starts, because they decide
 * whether and how it starts:
 * <ul>
 * <li>every command checks every variable's value ({@link ConfigVariable}): Quarkus reads them all as
 * it starts, whatever the command, and a bad one would end in a stack trace (or, for a boolean, in a
 * warning and "false"). Rank commands and `store`, which take the rank's configuration, also check the
 * relations between values (RANK &lt; WORLD_SIZE, ...). Each problem is one line on stderr,
 * {@code symmem: VAR=value is invalid: ...}, and the exit status is {@value #EXIT_CONFIG};</li>
 * <li>`config` runs without Quarkus, so that it can list the variables even when some are invalid;</li>
 * <li>commands that are not a rank keep the HTTP server off, so that they never take a rank's port;
 * ranks leave URI validation to the service (see RequestAdmission), which answers in its one error
 * format.</li>
 * </ul>
 */
@QuarkusMain
public class SymmemMain implements QuarkusApplication {
    /** Commands that run as a rank: they serve HTTP and join the world. */
    static final Set<String> RANK_COMMANDS = Set.of("serve", "demo", "chaos-rank");
    public static final int EXIT_CONFIG = 2;

    @Inject
    CommandLine.IFactory factory;

    /** Commands that are no rank but take the rank's configuration (MASTER_*, SYMMEM_STORE_*). */
    static final Set<String> CONFIGURED_COMMANDS = Set.of("store");

    public static void main(String... args) {
        if (args.length > 0 && args[0].equals("config")) {
            System.exit(new CommandLine(new SymmemCommand()).execute(args));
        }
        boolean rank = isRankCommand(args);
        List<String> problems = rank || (args.length > 0 && CONFIGURED_COMMANDS.contains(args[0]))
                ? SymmemConfigLoader.problems(System.getenv(), System.getProperties())
                : SymmemConfigLoader.valueProblems(System.getenv(), System.getProperties());
        if (!problems.isEmpty()) {
            for (String problem : problems) {
                System.err.println("symmem: " + problem);
            }
            System.exit(EXIT_CONFIG);
        }
        if (!rank) {
            System.setProperty("quarkus.http.host-enabled", "false");
        } else {
            // Quarkus's outermost HTTP handler answers a URI that does not parse with a bare 400; the
            // service's RequestAdmission makes the same check and answers in the API's error format.
            System.setProperty("vertx.disableURIValidation", "true");
        }
        Quarkus.run(SymmemMain.class, args);
    }

    /** serve, demo, `bench allreduce` and `bench pool` run as ranks. */
    static boolean isRankCommand(String... args) {
        String command = args.length == 0 ? "" : args[0];
        return RANK_COMMANDS.contains(command)
                || (command.equals("bench") && args.length > 1 && (args[1].equals("allreduce") || args[1].equals("pool")));
    }

    @Override
    public int run(String... args) {
        CommandLine commandLine = new CommandLine(new SymmemCommand(), factory);
        // `bench allreduce` lives beside the bench commands, registered here.
        commandLine.getSubcommands().get("bench").addSubcommand("allreduce",
                new CommandLine(AllReduceBenchCommand.class, factory));
        commandLine.getSubcommands().get("bench").addSubcommand("pool", new CommandLine(PoolBenchCommand.class, factory));
        // Everything after the launched command belongs to it: `launch -n 4 demo --sizes 1MiB`.
        commandLine.getSubcommands().get("launch").setStopAtPositional(true);
        commandLine.setParameterExceptionHandler(new OptionErrorHandler(commandLine.getParameterExceptionHandler()));
        return commandLine.execute(args);
    }
}
