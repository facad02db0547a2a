package io.symmem.cli;

import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import io.symmem.cli.bench.AllReduceBenchCommand;
import io.symmem.cli.bench.HttpBenchCommand;
import io.symmem.cli.bench.PoolBenchCommand;
import io.symmem.cli.common.ExitStatus;
import io.symmem.config.ConfigVariable;
import io.symmem.config.SymmemConfigLoader;
import io.symmem.nativ.NativeCore;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Entry point of the symmem command. Three things happen before Quarkus starts, because they decide
 * whether and how it starts:
 * <ul>
 * <li>every command checks every variable's value ({@link ConfigVariable}): Quarkus reads them all as
 * it starts, whatever the command, and a bad one would end in a stack trace (or, for a boolean, in a
 * warning and "false"). Rank commands and `store`, which take the rank's configuration, also check the
 * relations between values (RANK &lt; WORLD_SIZE, ...). Each problem is one line on stderr,
 * {@code symmem: VAR=value is invalid: ...}, and the exit status is {@value ExitStatus#CONFIG}; so is a rank's
 * API or management port that another process holds ({@link PortCheck}; one taken after that check, at
 * the server's bind, ends the same way: {@link StartFailure});</li>
 * <li>`config` runs without Quarkus, so that it can list the variables even when some are invalid;</li>
 * <li>commands that are not a rank keep the HTTP server off, so that they never take a rank's port;
 * ranks leave URI validation to the service (see RequestAdmission), which answers in its one error
 * format.</li>
 * </ul>
 * Which command runs is picocli's answer for the same tree that then executes it ({@link #startupOf}),
 * so that options, abbreviations and `launch`'s own arguments are never mistaken for a command name;
 * where the first argument names a command without subcommands, that name settles it without a parse
 * ({@link #namedFirst}).
 */
@QuarkusMain
public class SymmemMain implements QuarkusApplication {
    /** How a command needs the process prepared before Quarkus starts. */
    enum Startup {
        /** Runs without Quarkus: `config`, which lists the variables even when some are invalid. */
        WITHOUT_QUARKUS,
        /** A rank: serves HTTP and joins the world; every value and the relations between them checked. */
        RANK,
        /** No rank, but takes the rank's configuration (MASTER_*, SYMMEM_STORE_*): checked as a rank's; no HTTP. */
        CONFIGURED,
        /** Everything else: each value checked on its own; no HTTP. */
        PLAIN,
        /**
         * `launch`: each value checked on its own, then picocli without Quarkus. The launcher only starts
         * processes; booting Quarkus for it would put a second boot in series before every rank's.
         */
        LAUNCHER
    }

    private static final Set<Class<?>> RANK_COMMANDS = Set.of(ServeCommand.class, DemoCommand.class, ChaosRankCommand.class,
            AllReduceBenchCommand.class, PoolBenchCommand.class, HttpBenchCommand.class);
    private static final Set<Class<?>> CONFIGURED_COMMANDS = Set.of(StoreCommand.class);

    @Inject
    CommandLine.IFactory factory;

    public static void main(String... args) {
        Parsed parsed = parse(args);
        Startup startup = startupOf(parsed.command());
        if (startup == Startup.WITHOUT_QUARKUS) {
            System.exit(commandLine(CommandLine.defaultFactory()).execute(args));
        }
        if (startup == Startup.LAUNCHER) {
            List<String> problems = SymmemConfigLoader.valueProblems(System.getenv(), System.getProperties());
            problems.forEach(problem -> System.err.println("symmem: " + problem));
            System.exit(problems.isEmpty() ? commandLine(CommandLine.defaultFactory()).execute(args) : ExitStatus.CONFIG);
        }
        boolean rank = startup == Startup.RANK;
        if (rank) {
            // Every rank opens a backend of libsymmem as it joins; loading the library (JavaCPP's Loader) while
            // Quarkus boots takes that step off the join, which readiness waits for.
            Thread load = new Thread(NativeCore::version, "symmem-native-load");
            load.setDaemon(true);
            load.start();
        }
        List<String> problems = rank || startup == Startup.CONFIGURED
                ? SymmemConfigLoader.problems(System.getenv(), System.getProperties())
                : SymmemConfigLoader.valueProblems(System.getenv(), System.getProperties());
        if (rank && problems.isEmpty()) {
            problems = PortCheck.problems(System.getenv(), System.getProperties());
        }
        if (!problems.isEmpty()) {
            for (String problem : problems) {
                System.err.println("symmem: " + problem);
            }
            System.exit(ExitStatus.CONFIG);
        }
        if (!rank) {
            // Only ranks serve: the launcher, the store and the tools bind neither the API's port nor the
            // management port (which would be the port of the rank with LOCAL_RANK 0).
            System.setProperty("quarkus.http.host-enabled", "false");
            System.setProperty("quarkus.management.host-enabled", "false");
        } else {
            // Quarkus's outermost HTTP handler answers a URI that does not parse with a bare 400; the
            // service's RequestAdmission makes the same check and answers in the API's error format.
            System.setProperty("vertx.disableURIValidation", "true");
            if (parsed.command() == ServeCommand.class && parsed.runs()) {
                // The rank joins its world as soon as the application has started, while the command
                // line is still being set up for `serve` (which then waits for the join).
                System.setProperty(RankRuntime.JOIN_AT_START, "true");
                // From then on it may answer ready, so a SIGTERM from then on is already a normal end.
                ServeCommand.stopNormallyOnTerm();
            }
        }
        Quarkus.run(SymmemMain.class, StartFailure.ofProcess(), args);
    }

    /**
     * The startup of the command these arguments run: the last subcommand picocli matched, or, when
     * they do not parse, the one whose arguments are wrong (which then reports the mistake as it would
     * after a good startup: `demo --bogus` starts as a rank and fails as one).
     */
    static Startup startupOf(String... args) {
        return startupOf(parse(args).command());
    }

    /**
     * The class of the command some arguments run, and whether it runs (rather than print help or fail to
     * parse); {@code runs} is read for `serve` only.
     */
    private record Parsed(Class<?> command, boolean runs) {
    }

    private static Parsed parse(String... args) {
        Parsed named = namedFirst(args);
        if (named != null) {
            return named;
        }
        try {
            CommandLine.ParseResult result = commandLine(CommandLine.defaultFactory()).parseArgs(args);
            List<CommandLine> matched = result.asCommandLineList();
            boolean help = matched.stream().anyMatch(c -> c.isUsageHelpRequested() || c.isVersionHelpRequested());
            return new Parsed(matched.get(matched.size() - 1).getCommandSpec().userObject().getClass(), !help);
        } catch (ParameterException e) {
            return new Parsed(e.getCommandLine().getCommandSpec().userObject().getClass(), false);
        }
    }

    /**
     * The answer picocli's parse would give, where the first argument alone settles it: a top-level command
     * without subcommands, named first (what `launch` and Kubernetes start: `demo ...`, `serve`), starts as
     * its class says whatever follows, since a mistake in its options is reported by that command. `serve`
     * also needs to know that it runs (no help, no mistake), which only a bare `serve` shows without a parse.
     * Null where picocli must parse. This spares a rank a second build of the whole command tree before
     * Quarkus starts, the costliest step there: picocli's classes are too old for the JDK's AOT cache, and
     * the tree is read from annotations by reflection.
     */
    private static Parsed namedFirst(String... args) {
        if (args.length == 0) {
            return null;
        }
        for (Class<?> command : SymmemCommand.class.getAnnotation(CommandLine.Command.class).subcommands()) {
            CommandLine.Command spec = command.getAnnotation(CommandLine.Command.class);
            boolean named = spec.name().equals(args[0]) || List.of(spec.aliases()).contains(args[0]);
            if (named && spec.subcommands().length == 0) {
                boolean bare = args.length == 1;
                return command == ServeCommand.class && !bare ? null : new Parsed(command, bare);
            }
        }
        return null;
    }

    private static Startup startupOf(Class<?> type) {
        if (type == ConfigCommand.class) {
            return Startup.WITHOUT_QUARKUS;
        }
        if (type == LaunchCommand.class) {
            return Startup.LAUNCHER;
        }
        if (RANK_COMMANDS.contains(type)) {
            return Startup.RANK;
        }
        return CONFIGURED_COMMANDS.contains(type) ? Startup.CONFIGURED : Startup.PLAIN;
    }

    /** The symmem command tree, its commands made by {@code factory} (Quarkus's injects the rank's beans). */
    static CommandLine commandLine(CommandLine.IFactory factory) {
        CommandLine commandLine = new CommandLine(SymmemCommand.class, factory);
        // Everything after the launched command belongs to it: `launch -n 4 demo --sizes 1MiB`.
        commandLine.getSubcommands().get("launch").setStopAtPositional(true);
        commandLine.setParameterExceptionHandler(new OptionErrorHandler(commandLine.getParameterExceptionHandler()));
        return commandLine;
    }

    @Override
    public int run(String... args) throws Exception {
        Parsed bare = args.length == 1 ? namedFirst(args) : null;
        if (bare != null && bare.command() == ServeCommand.class) {
            // A bare `serve` (what the image and Kubernetes start) has nothing to parse and `serve` has no
            // options (SymmemMainStartupTest holds it to that), so it runs without picocli: its classes are too
            // old for the AOT cache, and loading and interpreting them took CPU from the world join that
            // readiness waits for.
            return factory.create(ServeCommand.class).call();
        }
        return commandLine(factory).execute(args);
    }
}
