package io.symmem.cli.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.collective.AllReduce;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeStream;
import io.symmem.nccl.NcclDataType;
import io.symmem.nccl.NcclRedOp;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The work of {@code symmem bench allreduce} on one rank; rank 0 prints and writes the results. */
final class CollectiveBenchRunner {
    record Settings(List<Long> sizes, DType dtype, ReduceOp op, List<Algorithm> algorithms, boolean inPlace, int iters,
            int minTimeMs, int warmup, int warmupMs, int rounds, Path json, boolean nccl) {
    }

    /**
     * One size: µs per op by column (symmem's algorithms, then with --nccl "nccl" and "nccl-window";
     * NaN = not run), µs per call on the host before the synchronize, launches per round, what AUTO picked.
     */
    record Row(long bytes, Map<String, Double> micros, Map<String, Double> hostMicros, Map<String, Long> launches,
            Map<String, Integer> slowestRanks, String autoPicks) {
    }

    /**
     * NCCL's all-reduce from Java on plain device memory and on the symmetric buffer as a window, in place and out
     * of place (-oop). Every NCCL column starts with NCCL_PLAIN.
     */
    static final String NCCL_PLAIN = "nccl", NCCL_WINDOW = "nccl-window", NCCL_PLAIN_OOP = "nccl-oop",
            NCCL_WINDOW_OOP = "nccl-window-oop";
    /** The suffix of an NCCL column's twin whose calls a C loop in this process makes ("nccl-window-c"). */
    static final String C_LOOP_SUFFIX = "-c";

    private static final int BARRIER_CHANNEL = 2;
    /** Most launches one round sizes itself to (the native NCCL bench's cap). */
    static final long MAX_LAUNCHES = 20000;
    private final RankRuntime runtime;
    private final Settings s;
    private final PrintStream out;
    private final int rank;
    private final int world;
    private final StoreExchange exchange;
    private final Duration timeout;
    private final LaunchTimer timer;
    private final LaunchTimer.Plan plan;

    CollectiveBenchRunner(RankRuntime runtime, Settings settings, PrintStream out) {
        this.runtime = runtime;
        this.s = settings;
        this.out = out;
        this.rank = runtime.config().rank();
        this.world = runtime.config().worldSize();
        this.exchange = runtime.exchange("bench-allreduce", rank, world);
        this.timeout = runtime.config().timeout().collective();
        this.timer = new LaunchTimer(exchange, runtime.config().timeout().rendezvous());
        this.plan = plan(settings);
    }

    static LaunchTimer.Plan plan(Settings s) {
        return new LaunchTimer.Plan(s.warmup(), s.warmupMs(), s.iters(), s.minTimeMs(), MAX_LAUNCHES, s.rounds());
    }

    /** One size's measurements, column by column. */
    private record Cells(Map<String, Double> micros, Map<String, Double> hostMicros, Map<String, Long> launches,
            Map<String, Integer> slowestRanks) {
        Cells() {
            this(new LinkedHashMap<>(), new LinkedHashMap<>(), new LinkedHashMap<>(), new LinkedHashMap<>());
        }

        void record(String column, LaunchTimer.Timing timing) {
            micros.put(column, timing.micros());
            hostMicros.put(column, timing.hostMicros());
            launches.put(column, timing.launches());
            slowestRanks.put(column, timing.slowestRank());
        }

        void skip(String column) {
            micros.put(column, Double.NaN);
            hostMicros.put(column, Double.NaN);
            launches.put(column, 0L);
            slowestRanks.put(column, -1);
        }
    }

    void run() {
        long maxBytes = s.sizes().stream().mapToLong(b -> elements(b) * s.dtype().bytes()).max().orElseThrow();
        List<Row> rows = new ArrayList<>();
        double barrierMicros;
        try (SymmetricMemory memory = runtime.allocator().allocate(exchange, maxBytes, runtime.config().timeout().rendezvous());
                LocalBuffer result = s.inPlace() ? null : memory.allocateLocal(maxBytes);
                NativeStream stream = memory.createStream();
                NcclColumns nccl = s.nccl() ? NcclColumns.open(runtime, exchange, memory, maxBytes) : null) {
            LaunchTimer.fillRandom(memory, maxBytes, s.dtype(), rank);
            if (nccl != null) {
                nccl.fillPlainRandom(maxBytes, s.dtype(), rank);
            }
            for (long size : s.sizes()) {
                long count = elements(size);
                Cells cells = new Cells();
                for (Algorithm a : s.algorithms()) {
                    if (s.inPlace() && a == Algorithm.ONE_SHOT && count * s.dtype().bytes() > memory.nativeBuffer().oneShotInPlaceMaxBytes()) {
                        cells.skip(a.id());
                        continue;
                    }
                    if (!s.inPlace() && a == Algorithm.TWO_SHOT_CE) {
                        cells.skip(a.id()); // in place only
                        continue;
                    }
                    cells.record(a.id(), timer.time(memory, stream, plan, () -> AllReduce.run(memory, a, s.dtype(), s.op(), count,
                            result, stream, timeout)));
                }
                if (nccl != null) {
                    NcclDataType dtype = NcclDataType.of(s.dtype());
                    NcclRedOp op = NcclRedOp.of(s.op());
                    // Each variant from Java and the same calls from NCCL's own C loop in this process, their rounds
                    // alternated: the difference is what the Java call costs, whatever the machine does meanwhile.
                    for (NcclColumns.Variant v : NcclColumns.Variant.values()) {
                        List<LaunchTimer.Timing> t = timer.timeAlternately(memory, stream, plan, List.of(
                                n -> nccl.runTimes(v, count, dtype, op, stream, n),
                                n -> nccl.runInC(v, count, dtype, op, stream, n)));
                        cells.record(v.column, t.get(0));
                        cells.record(v.cColumn(), t.get(1));
                    }
                }
                String picks = AllReduce.autoAlgorithm(memory, s.dtype(), count, s.inPlace()).id();
                rows.add(new Row(count * s.dtype().bytes(), cells.micros(), cells.hostMicros(), cells.launches(),
                        cells.slowestRanks(), picks));
            }
            barrierMicros = timer.time(memory, stream, plan,
                    () -> memory.nativeBuffer().barrier(BARRIER_CHANNEL, stream, runtime.config().timeout().barrier())).micros();
        }
        if (rank == 0) {
            print(rows, barrierMicros);
            if (s.json() != null) {
                writeJson(rows, barrierMicros);
            }
        }
        runtime.leave();
    }

    private List<String> columns() {
        List<String> columns = new ArrayList<>();
        s.algorithms().forEach(a -> columns.add(a.id()));
        if (s.nccl()) {
            for (NcclColumns.Variant v : NcclColumns.Variant.values()) {
                columns.add(v.column);
                columns.add(v.cColumn());
            }
        }
        return columns;
    }

    private long elements(long bytes) {
        return Math.max(1, bytes / s.dtype().bytes());
    }

    private double busbw(long bytes, double micros) {
        return 2.0 * (world - 1) / world * bytes / (micros * 1e-6) / 1e9;
    }

    private void print(List<Row> rows, double barrierMicros) {
        out.printf("symmem bench allreduce: %d ranks, backend %s (%s), %s %s, %s, %s; busbw = 2(n-1)/n bytes/t%n",
                world, runtime.backend().name(), runtime.backend().deviceName(), s.dtype().shortName(),
                s.op().name().toLowerCase(java.util.Locale.ROOT), s.inPlace() ? "in place" : "out of place", JavaRuntimes.thisJvm());
        out.println("time per op (us): " + plan.describe());
        if (s.nccl()) {
            out.println("nccl: NCCL's allReduce from Java (io.symmem.nccl), in place on plain device memory; nccl-window: the"
                    + " same on this symmetric buffer registered as an NCCL_WIN_COLL_SYMMETRIC window; -oop: out of place (into"
                    + " a second plain buffer / a second window); -c: the same calls made by NCCL's own C loop in this process"
                    + " (one Java call per round: what Java adds per call is the difference); busbw(best) is symmem's");
        }
        StringBuilder header = new StringBuilder(String.format("%12s", "bytes"));
        for (String c : columns()) {
            header.append(String.format(" %12s", c));
        }
        header.append(String.format(" %8s %12s", "auto=", "busbw(best)"));
        out.println(header);
        for (Row row : rows) {
            StringBuilder line = new StringBuilder(String.format("%12d", row.bytes()));
            double best = Double.NaN;
            for (String c : columns()) {
                double us = row.micros().get(c);
                line.append(Double.isNaN(us) ? String.format(" %12s", "-") : String.format(" %12.2f", us));
                boolean ours = !c.startsWith(NCCL_PLAIN);
                if (ours && !Double.isNaN(us) && (Double.isNaN(best) || us < best)) {
                    best = us;
                }
            }
            line.append(String.format(" %8s %12.1f", row.autoPicks(), Double.isNaN(best) ? 0.0 : busbw(row.bytes(), best)));
            out.println(line);
        }
        out.printf("barrier_on_stream: %.2f us (max over ranks)%n", barrierMicros);
    }

    private void writeJson(List<Row> rows, double barrierMicros) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("tool", "symmem bench allreduce");
        root.put("timing", plan.describe());
        root.put("rounds", s.rounds());
        root.put("java", JavaRuntimes.thisJvm());
        root.put("world", world);
        root.put("backend", runtime.backend().name());
        root.put("device", runtime.backend().deviceName());
        root.put("dtype", s.dtype().shortName());
        root.put("op", s.op().name().toLowerCase(java.util.Locale.ROOT));
        root.put("in_place", s.inPlace());
        List<Map<String, Object>> list = new ArrayList<>();
        for (Row row : rows) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("bytes", row.bytes());
            for (String c : columns()) {
                String key = c.replace('-', '_');
                double us = row.micros().get(c);
                r.put(key + "_us", Double.isNaN(us) ? null : us);
                r.put(key + "_busbw_gbps", Double.isNaN(us) ? null : busbw(row.bytes(), us));
                double host = row.hostMicros().get(c);
                r.put(key + "_host_us", Double.isNaN(host) ? null : host);
                r.put(key + "_launches", row.launches().get(c));
                int slowest = row.slowestRanks().get(c);
                r.put(key + "_slowest_rank", slowest < 0 ? null : slowest);
            }
            r.put("auto_algo", row.autoPicks());
            list.add(r);
        }
        root.put("allreduce", list);
        root.put("barrier_us", barrierMicros);
        try {
            Path parent = s.json().toAbsolutePath().getParent();
            if (parent != null) {
                java.nio.file.Files.createDirectories(parent);
            }
            new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(s.json().toFile(), root);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + s.json() + ": " + e.getMessage(), e);
        }
    }
}
