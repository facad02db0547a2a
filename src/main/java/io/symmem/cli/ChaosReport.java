package io.symmem.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The summary of `symmem chaos`: per phase, detection and exit times, and what the survivors said. */
final class ChaosReport {
    private final List<ChaosRound.Result> results;

    ChaosReport(List<ChaosRound.Result> results) {
        this.results = results;
    }

    static String line(int n, ChaosRound.Result r) {
        if (r.problem() != null) {
            return String.format("round %2d: %-10s rank %d: NOT RUN: %s", n, r.phase().id(), r.victim(),
                    r.problem().lines().findFirst().orElse(""));
        }
        StringBuilder s = new StringBuilder(String.format("round %2d: %-10s killed rank %d after %4d ms:", n, r.phase().id(),
                r.victim(), r.delayMs()));
        for (ChaosRound.Survivor v : r.survivors()) {
            s.append(String.format(" [%d: %s, %s, exit %s]", v.rank(),
                    v.detected() ? "detected " + v.detectedMs() + " ms" : "NOT detected",
                    v.named(r.victim()) ? "named" : "NOT named",
                    v.exitCode() == null ? "HUNG" : v.exitCode() + " after " + v.exitedMs() + " ms"));
        }
        return s.toString();
    }

    boolean allGood() {
        return results.stream().allMatch(r -> r.problem() == null && r.survivors().stream()
                .allMatch(v -> v.detected() && v.named(r.victim()) && v.exitedNonZero()));
    }

    void print(PrintStream out) {
        out.println();
        out.printf("%-10s %6s %9s %8s %7s %8s %5s %11s %11s %11s %11s%n", "phase", "rounds", "survivors", "detected",
                "named", "exit!=0", "hung", "detect p50", "detect p90", "detect max", "exit max");
        Map<ChaosPhase, List<ChaosRound.Result>> byPhase = ChaosCommand.byPhase(results);
        List<Long> allDetect = new ArrayList<>();
        for (Map.Entry<ChaosPhase, List<ChaosRound.Result>> e : byPhase.entrySet()) {
            List<Long> detect = new ArrayList<>();
            List<Long> exit = new ArrayList<>();
            int survivors = 0;
            int detected = 0;
            int named = 0;
            int nonZero = 0;
            int hung = 0;
            int notRun = 0;
            for (ChaosRound.Result r : e.getValue()) {
                if (r.problem() != null) {
                    notRun++;
                    continue;
                }
                for (ChaosRound.Survivor v : r.survivors()) {
                    survivors++;
                    if (v.detected()) {
                        detected++;
                        detect.add(v.detectedMs());
                    }
                    named += v.named(r.victim()) ? 1 : 0;
                    nonZero += v.exitedNonZero() ? 1 : 0;
                    if (v.exitCode() == null) {
                        hung++;
                    } else {
                        exit.add(v.exitedMs());
                    }
                }
            }
            allDetect.addAll(detect);
            out.printf("%-10s %6s %9d %8d %7d %8d %5d %11s %11s %11s %11s%n", e.getKey().id(),
                    e.getValue().size() + (notRun > 0 ? "(" + notRun + "!)" : ""), survivors, detected, named, nonZero, hung,
                    ms(percentile(detect, 50)), ms(percentile(detect, 90)), ms(percentile(detect, 100)),
                    ms(percentile(exit, 100)));
        }
        out.printf("all detections: p50 %s, p90 %s, max %s over %d survivors%n", ms(percentile(allDetect, 50)),
                ms(percentile(allDetect, 90)), ms(percentile(allDetect, 100)), allDetect.size());
        out.println(allGood() ? "chaos: PASS (every survivor detected the death, named the rank and exited non-zero)"
                : "chaos: FAIL (see the rounds above)");
    }

    private static Long percentile(List<Long> values, int p) {
        if (values.isEmpty()) {
            return null;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static String ms(Long value) {
        return value == null ? "-" : value + " ms";
    }
}
