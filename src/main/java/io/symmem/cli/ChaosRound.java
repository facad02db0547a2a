package io.symmem.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One round of `symmem chaos`: starts the ranks as separate processes (no launcher: each is on its
 * own, as a user would start them), waits until every rank is in the phase, kills one with SIGKILL,
 * and records how each survivor found out and how it ended.
 */
final class ChaosRound {
    /** What one survivor did after the kill. */
    record Survivor(int rank, Long detectedMs, String detectedRanks, String reason, Integer exitCode, Long exitedMs,
            String failure) {
        boolean detected() {
            return detectedMs != null;
        }

        /** The rank's liveness report or its error names the victim. */
        boolean named(int victim) {
            java.util.regex.Pattern victimNamed = java.util.regex.Pattern.compile("\\branks? \\[?([0-9]+, )*" + victim + "\\b");
            return (detectedRanks != null && java.util.regex.Pattern.compile("[\\[ ]" + victim + "[,\\]]").matcher(detectedRanks).find())
                    || (failure != null && victimNamed.matcher(failure).find());
        }

        boolean exitedNonZero() {
            return exitCode != null && exitCode != 0;
        }
    }

    record Result(ChaosPhase phase, int victim, long delayMs, List<Survivor> survivors, String problem) {
    }

    /** Lines of one rank, read as they come. */
    private static final class Rank {
        final int rank;
        final Process process;
        final List<String> lines = new ArrayList<>();
        volatile Long phaseAt;
        volatile Long detectedAt;
        volatile String detectedRanks;
        volatile String reason;
        volatile String failure;
        volatile Long exitedAt;

        Rank(int rank, Process process) {
            this.rank = rank;
            this.process = process;
        }

        synchronized void line(String line) {
            lines.add(line);
            if (line.startsWith(ChaosRankCommand.PHASE_LINE + " ")) {
                phaseAt = Long.parseLong(line.split(" ")[2]);
            } else if (line.startsWith(ChaosRankCommand.DETECTED_LINE + " ")) {
                String[] parts = line.split(" ", 4);
                detectedAt = Long.parseLong(parts[1]);
                int close = line.indexOf(']');
                detectedRanks = line.substring(line.indexOf('['), close + 1);
                reason = line.substring(close + 1).trim();
            } else if (line.contains(" FAILED: ")) {
                failure = line.substring(line.indexOf(" FAILED: ") + 9);
            }
        }

        synchronized String output() {
            return String.join("\n", lines);
        }
    }

    private final List<String> rankCommand;
    private final int ranks;
    private final Map<String, String> extraEnv;
    private final long boundMs;

    ChaosRound(List<String> rankCommand, int ranks, Map<String, String> extraEnv, long boundMs) {
        this.rankCommand = rankCommand;
        this.ranks = ranks;
        this.extraEnv = extraEnv;
        this.boundMs = boundMs;
    }

    Result run(ChaosPhase phase, int victim, long delayMs, int storePort, int httpBase, StringBuilder log)
            throws IOException, InterruptedException {
        List<Rank> started = new ArrayList<>();
        try {
            for (int r = 0; r < ranks; r++) {
                started.add(start(r, phase, storePort, httpBase));
            }
            long setupDeadline = System.currentTimeMillis() + 90_000;
            while (started.stream().anyMatch(rank -> rank.phaseAt == null)) {
                if (System.currentTimeMillis() > setupDeadline || started.stream().anyMatch(rank -> !rank.process.isAlive())) {
                    return new Result(phase, victim, delayMs, List.of(), "ranks did not all reach the phase:\n" + outputs(started));
                }
                Thread.sleep(20);
            }
            Thread.sleep(delayMs);
            long killedAt = System.currentTimeMillis();
            started.get(victim).process.destroyForcibly(); // SIGKILL on Linux: no shutdown hook runs
            List<Survivor> survivors = new ArrayList<>();
            long deadline = killedAt + boundMs;
            for (Rank rank : started) {
                if (rank.rank == victim) {
                    continue;
                }
                long left = Math.max(0, deadline - System.currentTimeMillis());
                boolean exited = rank.process.waitFor(left, TimeUnit.MILLISECONDS);
                if (exited) {
                    rank.exitedAt = System.currentTimeMillis();
                }
            }
            for (Rank rank : started) {
                if (rank.rank == victim) {
                    continue;
                }
                boolean exited = rank.exitedAt != null;
                if (!exited) {
                    rank.process.destroyForcibly();
                }
                survivors.add(new Survivor(rank.rank, rank.detectedAt == null ? null : rank.detectedAt - killedAt,
                        rank.detectedRanks, rank.reason, exited ? rank.process.exitValue() : null,
                        exited ? rank.exitedAt - killedAt : null, rank.failure));
            }
            log.append("---- ").append(phase.id()).append(", rank ").append(victim).append(" killed after ").append(delayMs)
                    .append(" ms ----\n").append(outputs(started)).append('\n');
            return new Result(phase, victim, delayMs, survivors, null);
        } finally {
            for (Rank rank : started) {
                rank.process.destroyForcibly();
                rank.process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private Rank start(int r, ChaosPhase phase, int storePort, int httpBase) throws IOException {
        List<String> args = new ArrayList<>(rankCommand);
        args.add("--phase");
        args.add(phase.id());
        ProcessBuilder builder = SelfCommand.localRank(args, r, ranks, "127.0.0.1");
        Map<String, String> env = builder.environment();
        env.put("MASTER_PORT", Integer.toString(storePort));
        env.put("SYMMEM_HTTP_PORT", Integer.toString(httpBase));
        env.putAll(extraEnv);
        Rank rank = new Rank(r, builder.start());
        Thread pump = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(rank.process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    rank.line(line);
                }
            } catch (IOException e) {
                // the rank exited
            }
        }, "chaos-rank-" + r);
        pump.setDaemon(true);
        pump.start();
        return rank;
    }

    private static String outputs(List<Rank> ranks) {
        StringBuilder all = new StringBuilder();
        for (Rank rank : ranks) {
            all.append("[rank ").append(rank.rank).append("]\n").append(rank.output()).append('\n');
        }
        return all.toString();
    }
}
