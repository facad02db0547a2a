package io.symmem.cli.bench;

import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.cli.common.ExitStatus;
import io.symmem.store.Store;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.etcd.EtcdStore;
import io.symmem.store.etcd.EtcdTarget;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "store", description = {
        "Store latency and throughput on loopback: set / get / add with 1 to 1024 clients, then a 1024-rank all_gather.",
        "Each client has its own connection and thread; every key is read back and checked.",
        "Without --host it starts a store server in this process; with --host/--port it measures that server (e.g. a PyTorch TCPStore).",
        "With --store etcd://..., it measures the store on that etcd cluster (a client per simulated client).",
        "--serve-only only serves a store (for PyTorch clients or another bench)."},
        footer = {"%nExamples:", "  symmem bench store", "  symmem bench store --host 127.0.0.1 --port 29600 --json out.json",
                "  symmem bench store --store etcd://127.0.0.1:2379/bench --clients 1,4,64 --ranks 64",
                "  symmem bench store --serve-only --port 29600"})
public class BenchStoreCommand implements Callable<Integer> {
    @Inject
    Vertx vertx;

    @Option(names = "--host", description = "Measure the store at this host instead of one started in-process.")
    String host;

    @Option(names = "--store", description = "Measure the store on this etcd cluster (etcd://host:port[,host:port...]/prefix, "
            + "as SYMMEM_STORE) instead of a TCPStore server.")
    String etcd;

    @Option(names = "--port", defaultValue = "29500", description = "Port of --host, or of --serve-only (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--serve-only", description = "Only serve a store on --bind:--port until killed or --serve-for passes.")
    boolean serveOnly;

    @Option(names = "--bind", defaultValue = "127.0.0.1", description = "Interface of --serve-only (default ${DEFAULT-VALUE}).")
    String bind;

    @Option(names = "--serve-for", defaultValue = "7200", description = "Seconds --serve-only serves at most (default ${DEFAULT-VALUE}).")
    long serveForSeconds;

    @Option(names = "--clients", split = ",", defaultValue = "1,4,64,1024", description = "Concurrency levels (default ${DEFAULT-VALUE}).")
    List<Integer> levels;

    @Option(names = "--ops", defaultValue = "20000", description = "Operations of each kind per level, over all clients (default ${DEFAULT-VALUE}).")
    int ops;

    // A fresh JVM serves its first ~100k requests slower while the JIT compiles the server's paths
    // (measured on the GPU host: 25 µs per get at 4 clients after 20k, 17 µs after a few 100k); a server
    // in another JVM is warmed up only by what this command sends it.
    @Option(names = "--warmup-ops", defaultValue = "200000", description = "Untimed set/get/add operations (each) on up to 4 clients before the first level, to warm up the server (default ${DEFAULT-VALUE}).")
    int warmupOps;

    @Option(names = "--value-bytes", defaultValue = "64", converter = ByteSizeConverter.ToInt.class,
            description = "Size of every value: bytes, or with a unit: KiB/MiB (1024^n) or KB/MB (1000^n), up to 2 GiB - 1 "
                    + "(default ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--phase-seconds", defaultValue = "20", description = "A phase (one op at one level) stops starting operations after this (default ${DEFAULT-VALUE}).")
    int phaseSeconds;

    @Option(names = "--op-timeout-seconds", defaultValue = "10", description = "Deadline of a single operation (default ${DEFAULT-VALUE}).")
    int opTimeoutSeconds;

    @Option(names = "--ranks", defaultValue = "1024", description = "Simulated ranks of the all_gather; 0 skips it (default ${DEFAULT-VALUE}).")
    int ranks;

    @Option(names = "--rounds", defaultValue = "3", description = "all_gather rounds (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--all-gather-timeout-seconds", defaultValue = "60", description = "Deadline of one all_gather round (default ${DEFAULT-VALUE}).")
    int allGatherTimeoutSeconds;

    @Option(names = "--deadline-seconds", defaultValue = "900", description = "No new phase starts after this (default ${DEFAULT-VALUE}).")
    int deadlineSeconds;

    @Option(names = "--pipeline", arity = "0..1", fallbackValue = "true",
            description = "Pipeline WAIT+GET in one write (TcpStoreClient.Options#pipelineWaits): only for a symmem server. "
                    + "Default: on for the in-process server, off with --host (a PyTorch server would mix up answers).")
    Boolean pipeline;

    @Option(names = "--client", defaultValue = "blocking",
            description = "blocking: BlockingStoreClient, each call on the caller's thread (what a rank's blocking code uses); "
                    + "async: TcpStoreClient on the Vert.x event loop (default ${DEFAULT-VALUE}).")
    String clientKind;

    @Option(names = "--all-gather-client", defaultValue = "async",
            description = "Client kind of the simulated ranks of the all_gather: async (event-loop clients, as 1024 ranks in one "
                    + "process are best simulated) or blocking (a thread per rank) (default ${DEFAULT-VALUE}).")
    String allGatherClientKind;

    @Option(names = "--label", description = "Name of the measured server in the output (default: symmem, or host:port).")
    String label;

    @Option(names = "--json", description = "Also write the figures to this file.")
    Path json;

    private BenchClients connectClients(String kind, String host, int port, int n, TcpStoreClient.Options options) {
        Duration deadline = Duration.ofSeconds(120);
        if (etcd != null) {
            return BenchClients.connectEtcd(EtcdTarget.parse(etcd), n, Duration.ofSeconds(opTimeoutSeconds));
        }
        return kind.equals("blocking")
                ? BenchClients.connectBlocking(host, port, n, deadline, options)
                : BenchClients.connect(vertx, host, port, n, deadline, options);
    }

    @Override
    public Integer call() throws Exception {
        if (serveOnly) {
            return new BenchServeOnly(vertx, bind, port, Duration.ofSeconds(serveForSeconds), System.out).run();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(deadlineSeconds).toNanos();
        BenchReport report = new BenchReport(System.out);
        if (etcd != null) {
            var problem = EtcdTarget.problem(etcd);
            if (problem.isPresent()) {
                System.err.println("symmem bench store: --store " + etcd + " is invalid: " + problem.get());
                return ExitStatus.CONFIG;
            }
        }
        boolean external = host != null || etcd != null;
        List<Integer> fitting = fittingLevels(report, external);
        int maxLevel = fitting.stream().mapToInt(Integer::intValue).max().orElse(0);

        StoreServer server = null;
        String where;
        if (etcd != null) {
            where = EtcdTarget.parse(etcd).describe();
        } else if (external) {
            where = host + ":" + port;
        } else {
            server = new StoreServer(vertx, "127.0.0.1", 0);
            int bound = server.start().await().atMost(Duration.ofSeconds(30));
            where = "127.0.0.1:" + bound;
        }
        String name = label != null ? label : external ? where : "symmem (in-process)";
        report.meta("date", Instant.now().toString());
        report.meta("server", name);
        report.meta("address", where);
        report.meta("cpus", Runtime.getRuntime().availableProcessors());
        report.meta("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        report.meta("value_bytes", valueBytes);
        report.meta("ops_per_level", ops);
        report.meta("fd_limit", BenchFdLimit.read().describe());
        System.out.printf("symmem bench store: server %s at %s, %d-byte values, %d ops of each kind per level, %d cpus, %s%n",
                name, where, valueBytes, ops, Runtime.getRuntime().availableProcessors(), BenchFdLimit.read().describe());
        boolean pipelined = pipeline != null ? pipeline : !external;
        report.meta("pipelined_waits", pipelined);
        for (String kind : List.of(clientKind, allGatherClientKind)) {
            if (!kind.equals("blocking") && !kind.equals("async")) {
                System.err.println("symmem bench store: --client and --all-gather-client take blocking or async, got '" + kind + "'");
                return ExitStatus.CONFIG;
            }
        }
        report.meta("client", clientKind);
        System.out.printf("client mode: %s, %s%n", clientKind,
                pipelined ? "WAIT+GET pipelined (symmem server)" : "TCPStore-compatible (no pipelining)");
        TcpStoreClient.Options clientOptions = TcpStoreClient.Options.defaults().withPipelineWaits(pipelined);
        String[] hostPort = etcd != null ? new String[] {"", "0"} : where.split(":");
        String runId = "bench/" + Long.toHexString(System.currentTimeMillis());
        Duration opTimeout = Duration.ofSeconds(opTimeoutSeconds);
        Duration phaseLimit = Duration.ofSeconds(phaseSeconds);
        long keysWritten = 0;
        try (Store control = etcd != null ? EtcdStore.connect(EtcdTarget.parse(etcd), Duration.ofSeconds(30))
                     : TcpStoreClient.connect(vertx, hostPort[0], Integer.parseInt(hostPort[1]),
                     Duration.ofSeconds(30), clientOptions).await().atMost(Duration.ofSeconds(31));
             BenchClients clients = connectClients(clientKind, hostPort[0], Integer.parseInt(hostPort[1]), maxLevel, clientOptions)) {
            System.out.printf(Locale.ROOT, "connected %d clients in %.0f ms%n", clients.size(), clients.connectMillis());
            report.meta("connect_ms", Math.round(clients.connectMillis()));
            Long keysBefore = numKeys(control, report);

            if (warmupOps > 0 && maxLevel > 0) {
                BenchLevel warm = new BenchLevel(clients, Math.min(4, maxLevel), runId + "/warmup", warmupOps, valueBytes,
                        phaseLimit, opTimeout);
                for (BenchLevel.OpResult r : warm.run()) {
                    if (r.errors() + r.lost() > 0) {
                        report.error("warm-up " + r.op() + ": errors " + r.errors() + ", lost " + r.lost()
                                + (r.phase().firstError() != null ? ", first: " + r.phase().firstError() : ""));
                    }
                }
                keysWritten += warm.keysWritten();
            }
            for (int n : fitting) {
                if (System.nanoTime() - deadline > 0) {
                    report.error("deadline of " + deadlineSeconds + " s passed: level " + n + " not run");
                    continue;
                }
                BenchLevel level = new BenchLevel(clients, n, runId, ops, valueBytes, phaseLimit, opTimeout);
                level.run().forEach(report::op);
                keysWritten += level.keysWritten();
            }
            if (ranks > 0) {
                // The simulated ranks get clients of their own, of the kind --all-gather-client names.
                BenchClients rankClients = connectClients(allGatherClientKind, hostPort[0], Integer.parseInt(hostPort[1]),
                        ranks, clientOptions);
                System.out.printf(Locale.ROOT, "connected %d %s clients for the all_gather in %.0f ms%n", rankClients.size(),
                        allGatherClientKind, rankClients.connectMillis());
                BenchAllGather gather = new BenchAllGather(rankClients, ranks, "bench" + Long.toHexString(System.nanoTime()),
                        valueBytes, Duration.ofSeconds(allGatherTimeoutSeconds), allGatherClientKind.equals("blocking"));
                try {
                    for (int round = 0; round < rounds; round++) {
                        if (System.nanoTime() - deadline > 0) {
                            report.error("deadline of " + deadlineSeconds + " s passed: all_gather round " + round + " not run");
                            break;
                        }
                        report.allGather(gather.run(round), valueBytes);
                        keysWritten += io.symmem.store.StoreExchange.keysPerAllGather(ranks)
                                + (round == 0 ? io.symmem.store.StoreExchange.keysPerGroup(ranks) : 0);
                    }
                } finally {
                    gather.shutdown();
                    rankClients.close();
                }
            }
            Long keysAfter = numKeys(control, report);
            if (keysBefore != null && keysAfter != null) {
                long delta = keysAfter - keysBefore;
                if (delta != keysWritten) {
                    report.error("the store holds " + delta + " new keys, the benchmark wrote " + keysWritten);
                } else {
                    System.out.println("key count checked: the store holds exactly the " + keysWritten + " keys written");
                }
            }
        } finally {
            if (server != null) {
                server.stop().await().atMost(Duration.ofSeconds(30));
            }
        }
        report.targets(maxLevel);
        if (json != null) {
            report.writeJson(json);
            System.out.println("wrote " + json);
        }
        return report.errors() == 0 && report.lost() == 0 ? 0 : 1;
    }

    /** The levels whose sockets fit the open-file limit; the others are reported and skipped. */
    private List<Integer> fittingLevels(BenchReport report, boolean external) {
        BenchFdLimit limit = BenchFdLimit.read();
        List<Integer> fitting = new ArrayList<>();
        int perClient = external ? 1 : 2; // in-process: the server's end of each connection too
        for (int n : levels) {
            if (n < 1) {
                throw new IllegalArgumentException("--clients must be positive, got " + n);
            }
            long needed = (long) Math.max(n, ranks) * perClient + 256;
            if (limit.allows(needed)) {
                fitting.add(n);
            } else {
                report.note("level " + n + " skipped: " + limit.advice(needed));
            }
        }
        if (ranks > 0 && !limit.allows((long) ranks * perClient + 256)) {
            report.note("all_gather skipped: " + limit.advice((long) ranks * perClient + 256));
            ranks = 0;
        }
        return fitting;
    }

    private static Long numKeys(Store control, BenchReport report) {
        try {
            return control.numKeys().await().atMost(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            report.note("numKeys failed, key count not checked: " + e.getMessage());
            return null;
        }
    }
}
