package io.symmem.cli.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The store benchmark's table (printed as rows arrive) and its JSON file. */
final class BenchReport {
    /** TCPStore with 4 clients at once, get: the anchor of shared/bench/README.md (4 x H200, PyTorch 2.11). */
    static final double TCPSTORE_GET_ANCHOR_US = 45.4;
    static final double ALL_GATHER_TARGET_S = 1.0;

    private final PrintStream out;
    private final Map<String, Object> meta = new LinkedHashMap<>();
    private final List<Map<String, Object>> ops = new ArrayList<>();
    private final List<Map<String, Object>> allGathers = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private long errors;
    private long lost;
    private boolean headerPrinted;

    BenchReport(PrintStream out) {
        this.out = out;
    }

    void meta(String key, Object value) {
        meta.put(key, value);
    }

    void note(String text) {
        notes.add(text);
        out.println("note: " + text);
    }

    void op(BenchLevel.OpResult r) {
        if (!headerPrinted) {
            out.printf("%8s %-4s %8s %10s %10s %10s %10s %11s %7s %6s%n",
                    "clients", "op", "ops", "mean us", "p50 us", "p99 us", "max us", "ops/s", "errors", "lost");
            headerPrinted = true;
        }
        BenchPhase.Result p = r.phase();
        BenchStats s = p.latency();
        out.printf(Locale.ROOT, "%8d %-4s %8d %10.1f %10.1f %10.1f %10.1f %11.0f %7d %6d%s%n",
                r.clients(), r.op(), p.ok(), s.meanUs(), s.p50Us(), s.p99Us(), s.maxUs(), p.opsPerSecond(),
                r.errors(), r.lost(), p.finished() ? "" : "  (threads did not finish by the deadline)");
        if (p.firstError() != null) {
            out.println("         first error: " + p.firstError());
        }
        errors += r.errors() + (p.finished() ? 0 : 1);
        lost += r.lost();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("clients", r.clients());
        m.put("op", r.op());
        m.put("ops", p.ok());
        m.put("mean_us", round(s.meanUs()));
        m.put("p50_us", round(s.p50Us()));
        m.put("p99_us", round(s.p99Us()));
        m.put("max_us", round(s.maxUs()));
        m.put("ops_per_s", Math.round(p.opsPerSecond()));
        m.put("seconds", round(p.seconds()));
        m.put("errors", r.errors());
        m.put("lost", r.lost());
        m.put("finished", p.finished());
        m.put("first_error", p.firstError());
        ops.add(m);
    }

    void allGather(BenchAllGather.Result r, int valueBytes) {
        out.printf(Locale.ROOT, "all_gather of %d-byte values among %d ranks, round %d: %.3f s, errors %d%n",
                valueBytes, r.ranks(), r.round(), r.seconds(), r.errors());
        if (r.firstError() != null) {
            out.println("         first error: " + r.firstError());
        }
        errors += r.errors();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ranks", r.ranks());
        m.put("round", r.round());
        m.put("value_bytes", valueBytes);
        m.put("seconds", round(r.seconds()));
        m.put("errors", r.errors());
        m.put("first_error", r.firstError());
        allGathers.add(m);
    }

    void error(String text) {
        errors++;
        out.println("ERROR: " + text);
        notes.add("ERROR: " + text);
    }

    long errors() {
        return errors;
    }

    long lost() {
        return lost;
    }

    /** The verdict on each target, printed last. */
    void targets(int maxClients) {
        out.println("targets:");
        ops.stream().filter(m -> "get".equals(m.get("op")) && Integer.valueOf(4).equals(m.get("clients"))).findFirst()
                .ifPresentOrElse(m -> {
                    double us = ((Number) m.get("mean_us")).doubleValue();
                    double limit = TCPSTORE_GET_ANCHOR_US / 2;
                    verdict(String.format(Locale.ROOT, "get at 4 clients %.1f us/op mean <= %.1f (half of TCPStore's %.1f)",
                            us, limit, TCPSTORE_GET_ANCHOR_US), us <= limit);
                }, () -> out.println("  get at 4 clients: not measured"));
        allGathers.stream().filter(m -> Integer.valueOf(1024).equals(m.get("ranks")))
                .mapToDouble(m -> ((Number) m.get("seconds")).doubleValue()).min()
                .ifPresentOrElse(s -> verdict(String.format(Locale.ROOT,
                        "all_gather among 1024 ranks %.3f s (best round) < %.1f s", s, ALL_GATHER_TARGET_S),
                        s < ALL_GATHER_TARGET_S), () -> out.println("  all_gather among 1024 ranks: not measured"));
        long bigErrors = ops.stream().filter(m -> Integer.valueOf(maxClients).equals(m.get("clients")))
                .mapToLong(m -> ((Number) m.get("errors")).longValue() + ((Number) m.get("lost")).longValue()).sum();
        verdict("no error and no lost key at " + maxClients + " clients (" + bigErrors + ")", bigErrors == 0);
        verdict("no error and no lost key anywhere (errors " + errors + ", lost " + lost + ")", errors == 0 && lost == 0);
    }

    private void verdict(String what, boolean met) {
        out.println("  " + (met ? "MET    " : "MISSED ") + what);
    }

    void writeJson(Path file) throws IOException {
        Map<String, Object> root = new LinkedHashMap<>(meta);
        root.put("ops", ops);
        root.put("all_gather", allGathers);
        root.put("errors", errors);
        root.put("lost", lost);
        root.put("notes", notes);
        new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(file.toFile(), root);
    }

    private static Object round(double v) {
        return Double.isNaN(v) ? null : Math.round(v * 100) / 100.0;
    }
}
