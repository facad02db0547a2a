package io.symmem.cli;

import io.symmem.cli.common.ExitStatus;
import io.symmem.config.StoreHost;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts N ranks of this application on this machine, as torchrun does: each gets RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; its output is prefixed with its rank;
 * the first rank that fails stops the others, and the launcher exits with that rank's code.
 *
 * <p>Every rank starts at once. Without a port given, rank 0 takes MASTER_PORT=0: its store binds a free
 * port and writes it to SYMMEM_STORE_PORT_FILE, from which the other ranks (MASTER_PORT=0 too) read it
 * while they start. Where the store is not rank 0's (SYMMEM_STORE_HOST), rank 0 starts first and the
 * others only once it published a port (it says why it cannot).
 */
public final class LocalLauncher {
    private final int ranks;
    private final String masterAddr;
    private final int masterPort;
    private final Duration gracePeriod;
    private final PrintStream out;
    private final Map<String, String> env;
    /** This machine's place among the job's nodes (torchrun's --nnodes and --node-rank); 1 and 0 alone. */
    private int nodes = 1;
    private int node = 0;

    public LocalLauncher(int ranks, String masterAddr, int masterPort, Duration gracePeriod, PrintStream out) {
        this(ranks, masterAddr, masterPort, gracePeriod, out, System.getenv());
    }

    /**
     * This launcher starts node {@code node}'s ranks of a job of {@code nodes} nodes: RANK node × N to
     * node × N + N - 1 of WORLD_SIZE nodes × N. The store is the job's rank 0's, on node 0 at
     * MASTER_ADDR:MASTER_PORT (a port of 0 cannot be told to other machines).
     */
    public LocalLauncher onNode(int nodes, int node) {
        this.nodes = nodes;
        this.node = node;
        return this;
    }

    /** With the environment the port checks read given (tests); the ranks inherit this process's. */
    LocalLauncher(int ranks, String masterAddr, int masterPort, Duration gracePeriod, PrintStream out, Map<String, String> env) {
        this.env = env;
        this.ranks = ranks;
        this.masterAddr = masterAddr;
        this.masterPort = masterPort;
        this.gracePeriod = gracePeriod;
        this.out = out;
    }

    public int run(List<String> command) throws IOException, InterruptedException {
        Map<String, String> ports;
        try {
            PortBlocks blocks = new PortBlocks(ranks);
            if (node == 0) {
                // Only node 0's rank 0 binds the store's port; on another node it is node 0's, and in use.
                blocks.checkStorePort(env, masterAddr, masterPort);
            }
            ports = blocks.rankEnvironment(env, out);
        } catch (PortBlocks.PortTakenException e) {
            out.println("symmem launch: " + e.getMessage() + "; no rank was started");
            return ExitStatus.CONFIG;
        }
        List<Process> processes = new ArrayList<>();
        List<Thread> pumps = new ArrayList<>();
        // Stopped from outside (SIGTERM, as Kubernetes stops a pod whose PID 1 this launcher is): the ranks get
        // the same signal, so that they leave their world in order, and are killed only past the grace period.
        Thread stopOnExit = new Thread(() -> {
            try {
                stopAll(processes);
            } catch (InterruptedException e) {
                processes.forEach(Process::destroyForcibly);
            }
        });
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        // With the store on etcd (SYMMEM_STORE) no rank hosts one: every rank starts at once. On a node other
        // than 0 no local rank is the job's rank 0 (and the port is a fixed one): every rank starts at once too.
        boolean rank0Binds = masterPort == 0 && env.get("SYMMEM_STORE") == null && node == 0;
        Path portDir = rank0Binds ? Files.createTempDirectory("symmem-launch") : null;
        boolean othersReadPortFile = rank0Binds && rank0HostsStore(env);
        try {
            int port = masterPort;
            int first = 0;
            if (rank0Binds) {
                // Rank 0 binds a free port itself and publishes it: a port probed here could be taken by
                // another process before rank 0 binds it.
                Path portFile = portDir.resolve("store-port");
                Map<String, String> publishedPort = with(ports, Map.of("MASTER_PORT", "0", "SYMMEM_STORE_PORT_FILE", portFile.toString()));
                start(command, 0, publishedPort, processes, pumps);
                first = 1;
                if (othersReadPortFile) {
                    // Booting is most of a rank's start: the others boot while rank 0 does, and read the port
                    // it publishes when they need it.
                    for (int rank = 1; rank < ranks; rank++) {
                        start(command, rank, publishedPort, processes, pumps);
                    }
                    first = ranks;
                    announcePort(portFile, processes.get(0));
                } else {
                    Integer published = awaitPort(portFile, processes.get(0));
                    if (published == null) {
                        int code = processes.get(0).exitValue();
                        if (code != 0) {
                            pumps.get(0).join(TimeUnit.SECONDS.toMillis(5));
                            out.println("symmem launch: rank 0 exited with code " + code + " before it served the store; "
                                    + "the other ranks were not started");
                            return code;
                        }
                        // Rank 0 finished without a store (e.g. --help): the others run the same way, with no store to reach.
                    } else {
                        port = published;
                        out.println("symmem launch: rank 0 serves the store at " + masterAddr + ":" + port);
                    }
                }
            }
            for (int rank = first; rank < ranks; rank++) {
                start(command, rank, with(ports, port == 0 ? Map.of() : Map.of("MASTER_PORT", Integer.toString(port))),
                        processes, pumps);
            }
            int code = awaitRanks(processes);
            for (Thread pump : pumps) {
                pump.join(TimeUnit.SECONDS.toMillis(5));
            }
            if (code == 0) {
                out.println("symmem launch: all " + ranks + " ranks exited 0");
            }
            return code;
        } finally {
            processes.forEach(Process::destroyForcibly);
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already
            }
            if (portDir != null) {
                deleteQuietly(portDir);
            }
        }
    }

    private static Map<String, String> with(Map<String, String> a, Map<String, String> b) {
        Map<String, String> both = new java.util.HashMap<>(a);
        both.putAll(b);
        return both;
    }

    /** Starts one rank with torchrun's variables (and {@code extra}), its output pumped with its rank in front. */
    private void start(List<String> command, int rank, Map<String, String> extra, List<Process> processes, List<Thread> pumps)
            throws IOException {
        ProcessBuilder builder = SelfCommand.nodeRank(command, node, rank, ranks, nodes, masterAddr);
        builder.environment().putAll(extra);
        Process process = builder.start();
        processes.add(process);
        pumps.add(pump(node * ranks + rank, process));
    }

    /**
     * The port rank 0 publishes in {@code portFile} once its store listens (written whole: see
     * WorldMember), or null when rank 0 exits first. Rank 0's own deadlines bound the wait.
     */
    private static Integer awaitPort(Path portFile, Process rank0) throws IOException, InterruptedException {
        while (!Files.exists(portFile)) {
            if (rank0.waitFor(20, TimeUnit.MILLISECONDS)) {
                return Files.exists(portFile) ? Integer.valueOf(Files.readString(portFile).trim()) : null;
            }
        }
        return Integer.valueOf(Files.readString(portFile).trim());
    }

    /** Says where rank 0 serves the store once it published the port (from a thread of its own: nobody waits for it). */
    private void announcePort(Path portFile, Process rank0) {
        Thread t = new Thread(() -> {
            try {
                Integer port = awaitPort(portFile, rank0);
                if (port != null) {
                    out.println("symmem launch: rank 0 serves the store at " + masterAddr + ":" + port);
                }
            } catch (IOException | InterruptedException | NumberFormatException e) {
                // the ranks report their own failures; this line is only information
            }
        }, "store-port");
        t.setDaemon(true);
        t.start();
    }

    /** Whether rank 0 hosts the store (SYMMEM_STORE_HOST unset or rank0), so the others can read the port it binds. */
    private static boolean rank0HostsStore(Map<String, String> env) {
        String host = env.get("SYMMEM_STORE_HOST");
        return host == null || host.trim().equalsIgnoreCase(StoreHost.RANK0.id());
    }

    private static void deleteQuietly(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }

    /** Waits for every rank; the first non-zero exit stops the rest and becomes the result. */
    private int awaitRanks(List<Process> processes) throws InterruptedException {
        boolean[] done = new boolean[processes.size()];
        int remaining = processes.size();
        while (remaining > 0) {
            for (int rank = 0; rank < processes.size(); rank++) {
                Process p = processes.get(rank);
                if (done[rank] || !p.waitFor(20, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                done[rank] = true;
                remaining--;
                if (p.exitValue() != 0) {
                    out.println("symmem launch: rank " + rank + " exited with code " + p.exitValue()
                            + "; stopping the other ranks");
                    stopAll(processes);
                    return p.exitValue();
                }
            }
        }
        return 0;
    }

    private void stopAll(List<Process> processes) throws InterruptedException {
        processes.forEach(Process::destroy);
        long deadline = System.nanoTime() + gracePeriod.toNanos();
        for (Process p : processes) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    private Thread pump(int rank, Process process) {
        Thread t = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    synchronized (out) {
                        out.println("[" + rank + "] " + line);
                    }
                }
            } catch (IOException e) {
                // the rank's output closed: it exited
            }
        }, "rank-" + rank + "-output");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
