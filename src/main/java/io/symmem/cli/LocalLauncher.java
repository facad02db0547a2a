package io.symmem.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts N ranks of this application on this machine, as torchrun does: each gets RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT; its output is prefixed with its rank;
 * the first rank that fails stops the others, and the launcher exits with that rank's code.
 */
public final class LocalLauncher {
    private final int ranks;
    private final String masterAddr;
    private final int masterPort;
    private final Duration gracePeriod;
    private final PrintStream out;

    public LocalLauncher(int ranks, String masterAddr, int masterPort, Duration gracePeriod, PrintStream out) {
        this.ranks = ranks;
        this.masterAddr = masterAddr;
        this.masterPort = masterPort;
        this.gracePeriod = gracePeriod;
        this.out = out;
    }

    public int run(List<String> command) throws IOException, InterruptedException {
        int port = masterPort != 0 ? masterPort : freePortOutsideHttpPorts(masterAddr);
        List<Process> processes = new ArrayList<>();
        List<Thread> pumps = new ArrayList<>();
        Thread stopOnExit = new Thread(() -> processes.forEach(Process::destroyForcibly));
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        try {
            for (int rank = 0; rank < ranks; rank++) {
                ProcessBuilder builder = new ProcessBuilder(SelfCommand.of(command)).redirectErrorStream(true);
                Map<String, String> env = builder.environment();
                env.put("RANK", Integer.toString(rank));
                env.put("LOCAL_RANK", Integer.toString(rank));
                env.put("WORLD_SIZE", Integer.toString(ranks));
                env.put("LOCAL_WORLD_SIZE", Integer.toString(ranks));
                env.put("MASTER_ADDR", masterAddr);
                env.put("MASTER_PORT", Integer.toString(port));
                Process process = builder.start();
                processes.add(process);
                pumps.add(pump(rank, process));
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

    /** A free store port that none of the ranks' HTTP ports (SYMMEM_HTTP_PORT + local rank) will want. */
    private int freePortOutsideHttpPorts(String host) throws IOException {
        int httpBase = httpBasePort();
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = freePort(host);
            if (port < httpBase || port >= httpBase + ranks) {
                return port;
            }
        }
        throw new IOException("found no free store port outside the HTTP ports " + httpBase + ".." + (httpBase + ranks - 1));
    }

    private static int httpBasePort() {
        String configured = System.getenv("SYMMEM_HTTP_PORT");
        try {
            return configured == null ? 8700 : Integer.parseInt(configured.trim());
        } catch (NumberFormatException invalid) {
            return 8700; // the ranks will reject it with a message naming SYMMEM_HTTP_PORT
        }
    }

    private static int freePort(String host) throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return socket.getLocalPort();
        }
    }
}
