package io.symmem.cli;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfigLoader;
import jakarta.inject.Inject;
import java.util.Set;
import picocli.CommandLine;

/**
 * Entry point of the symmem command. Two things happen before Quarkus starts, because they decide
 * how it starts: commands that are not a rank (launch, config) keep the HTTP server off, so that
 * they never take a rank's port; rank commands (and `store`, which takes their configuration)
 * validate the environment first, so that a bad variable ends start-up with one line naming it
 * rather than a stack trace. Ranks also leave URI validation to the service (see RequestAdmission).
 */
@QuarkusMain
public class SymmemMain implements QuarkusApplication {
    /** Commands that run as a rank: they serve HTTP and join the world. */
    static final Set<String> RANK_COMMANDS = Set.of("serve", "demo", "chaos-rank");
    static final int EXIT_CONFIG = 2;

    @Inject
    CommandLine.IFactory factory;

    /** Commands that are no rank but take the rank's configuration (MASTER_*, SYMMEM_STORE_*). */
    static final Set<String> CONFIGURED_COMMANDS = Set.of("store");

    public static void main(String... args) {
        boolean rank = isRankCommand(args);
        if (rank || (args.length > 0 && CONFIGURED_COMMANDS.contains(args[0]))) {
            try {
                SymmemConfigLoader.fromProcess();
            } catch (InvalidConfigurationException e) {
                System.err.println("symmem: " + e.getMessage());
                System.exit(EXIT_CONFIG);
            }
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

    /** serve, demo and `bench allreduce` run as ranks. */
    static boolean isRankCommand(String... args) {
        String command = args.length == 0 ? "" : args[0];
        return RANK_COMMANDS.contains(command)
                || (command.equals("bench") && args.length > 1 && args[1].equals("allreduce"));
    }

    @Override
    public int run(String... args) {
        CommandLine commandLine = new CommandLine(new SymmemCommand(), factory);
        // `bench allreduce` lives beside the bench commands, registered here.
        commandLine.getSubcommands().get("bench").addSubcommand("allreduce",
                new CommandLine(AllReduceBenchCommand.class, factory));
        // Everything after the launched command belongs to it: `launch -n 4 demo --sizes 1MiB`.
        commandLine.getSubcommands().get("launch").setStopAtPositional(true);
        return commandLine.execute(args);
    }
}
