package io.symmem.cli;

import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.cli.common.ExitStatus;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Kills a random rank at a random phase, round after round, and reports how fast and how well the
 * survivors found out: detection time (from the kill to the survivor's liveness report), how many
 * named the dead rank, how many exited non-zero, how long they took to exit, and any that hung.
 */
@Command(name = "chaos", description = "Fail-fast check: starts N ranks (separate processes, no launcher), SIGKILLs a random one "
        + "in a random phase (rendezvous, collective, barrier, store, idle), N rounds; prints detection times and how many "
        + "survivors named the dead rank. Exit 0 only if every survivor of every round detected, named and exited non-zero.")
public class ChaosCommand implements Callable<Integer> {
    @Option(names = {"-n", "--ranks"}, defaultValue = "4", description = "Ranks per round (default ${DEFAULT-VALUE}).")
    int ranks;

    @Option(names = "--rounds", defaultValue = "10", description = "Rounds (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--phases", split = ",", defaultValue = "rendezvous,collective,barrier,store,idle",
            converter = ChaosPhaseConverter.class, description = "Phases to draw from (default ${DEFAULT-VALUE}).")
    List<ChaosPhase> phases;

    @Option(names = "--victim", description = "Always kill this rank (default: a random one each round).")
    Integer victim;

    @Option(names = "--seed", description = "Random seed (default: the time); printed so a run can be repeated.")
    Long seed;

    @Option(names = "--size", defaultValue = "1MiB", converter = ByteSizeConverter.class,
            description = "Symmetric buffer size of the ranks (default ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--bound-seconds", defaultValue = "30",
            description = "How long survivors get, after the kill, to exit before they count as hung (default ${DEFAULT-VALUE}).")
    int boundSeconds;

    @Option(names = "--log", description = "Write every rank's output of every round here (with --restart: a directory "
            + "for each rank's log).")
    Path log;

    @Option(names = "--restart", description = "Instead: one world of `serve` ranks in which each round kills a rank and "
            + "starts it again with the same RANK; prints the time from its start until every rank is ready again in the "
            + "world's next generation (p50, max). Exit 0 only if every round re-formed within --bound-seconds.")
    boolean restart;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (ranks < 2 || ranks > 64) {
            System.err.println("symmem chaos: --ranks must be between 2 and 64, got " + ranks);
            return ExitStatus.CONFIG;
        }
        if (victim != null && (victim < 0 || victim >= ranks)) {
            System.err.println("symmem chaos: --victim must be a rank, 0.." + (ranks - 1) + ", got " + victim);
            return ExitStatus.CONFIG;
        }
        long usedSeed = seed != null ? seed : System.nanoTime();
        SplittableRandom random = new SplittableRandom(usedSeed);
        if (restart) {
            Path logs = RestartRounds.logDir(log);
            System.out.printf("symmem chaos --restart: %d rounds of %d serve ranks, backend %s, seed %d, logs in %s%n", rounds,
                    ranks, System.getenv().getOrDefault("SYMMEM_BACKEND", "host"), usedSeed, logs);
            RestartRounds world = new RestartRounds(ranks, freePort(), freePort(ranks), freePort(ranks), boundSeconds * 1000L, logs);
            return world.run(rounds, random, victim, System.out) ? 0 : 1;
        }
        // The defaults of the deadlines stay: only liveness can explain a survivor that fails fast.
        ChaosRound round = new ChaosRound(List.of("chaos-rank", "--size", Long.toString(size)), ranks, Map.of(), boundSeconds * 1000L);
        System.out.printf("symmem chaos: %d rounds of %d ranks, backend %s, seed %d%n", rounds, ranks,
                System.getenv().getOrDefault("SYMMEM_BACKEND", "auto"), usedSeed);
        List<ChaosRound.Result> results = new ArrayList<>();
        StringBuilder outputs = new StringBuilder();
        for (int i = 0; i < rounds; i++) {
            ChaosPhase phase = phases.get(random.nextInt(phases.size()));
            int dead = victim != null ? victim : random.nextInt(ranks);
            long delayMs = 200 + random.nextInt(1300);
            ChaosRound.Result result = round.run(phase, dead, delayMs, freePort(), freePort(ranks), outputs);
            results.add(result);
            System.out.println(ChaosReport.line(i + 1, result));
        }
        if (log != null) {
            Files.writeString(log, outputs, StandardCharsets.UTF_8);
            System.out.println("symmem chaos: every rank's output is in " + log);
        }
        ChaosReport report = new ChaosReport(results);
        report.print(System.out);
        return report.allGood() ? 0 : 1;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** A base port with {@code count} free ports after it (the ranks' HTTP ports). */
    private static int freePort(int count) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = freePort();
            if (base + count > 65535) {
                continue;
            }
            boolean free = true;
            for (int p = base; p < base + count && free; p++) {
                try (ServerSocket socket = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                    free = true;
                } catch (IOException taken) {
                    free = false;
                }
            }
            if (free) {
                return base;
            }
        }
        throw new IOException("found no block of " + count + " free ports on 127.0.0.1");
    }

    static Map<ChaosPhase, List<ChaosRound.Result>> byPhase(List<ChaosRound.Result> results) {
        Map<ChaosPhase, List<ChaosRound.Result>> map = new EnumMap<>(ChaosPhase.class);
        for (ChaosRound.Result r : results) {
            map.computeIfAbsent(r.phase(), p -> new ArrayList<>()).add(r);
        }
        return map;
    }
}
