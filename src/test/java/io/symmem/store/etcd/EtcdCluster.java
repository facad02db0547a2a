package io.symmem.store.etcd;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real etcd cluster on loopback for tests: Debian's etcd-server binary, N members on free ports,
 * each with a temporary data directory (removed on close). Members can be killed, paused (SIGSTOP,
 * as a member cut off from its peers looks to them) and resumed. Start-up waits for every member's
 * /health to say true, with a deadline, never a fixed sleep.
 */
public final class EtcdCluster implements AutoCloseable {

    private static final Duration HEALTHY_WITHIN = Duration.ofSeconds(30);

    /** One member: its ports, data directory and process. */
    public static final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path dataDir;
        Process process;
        boolean paused;
        List<String> command;

        /** Starts the member; on its existing data directory, it rejoins with what it held. */
        void launch() throws IOException {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dataDir.resolveSibling(name + ".log").toFile())).start();
        }

        Member(String name, int clientPort, int peerPort, Path dataDir) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dataDir = dataDir;
        }

        public String clientUrl() {
            return "http://127.0.0.1:" + clientPort;
        }

        public String endpoint() {
            return "127.0.0.1:" + clientPort;
        }
    }

    private final List<Member> members;
    private final Path root;

    private EtcdCluster(List<Member> members, Path root) {
        this.members = members;
        this.root = root;
    }

    /** The etcd binary: SYMMEM_ETCD (a path), else etcd on the PATH. */
    public static Optional<Path> binary() {
        String explicit = System.getenv("SYMMEM_ETCD");
        if (explicit != null && !explicit.isBlank()) {
            return Optional.of(Path.of(explicit)).filter(Files::isExecutable);
        }
        return Stream.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":"))
                .map(dir -> Path.of(dir, "etcd")).filter(Files::isExecutable).findFirst();
    }

    /** Starts a cluster, or skips the calling test (class) with a message when etcd is not installed. */
    public static EtcdCluster startOrSkip(int size) throws IOException, InterruptedException {
        Optional<Path> etcd = binary();
        Assumptions.assumeTrue(etcd.isPresent(), "etcd is not installed (no etcd on the PATH, SYMMEM_ETCD unset): "
                + "install Debian's etcd-server (bin/ensure-deps --test does) to run the etcd store tests");
        return start(etcd.get(), size);
    }

    public static EtcdCluster start(Path etcd, int size) throws IOException, InterruptedException {
        Path root = Files.createTempDirectory("symmem-etcd-");
        List<Member> members = new ArrayList<>();
        List<Integer> ports = freePorts(2 * size);
        for (int i = 0; i < size; i++) {
            members.add(new Member("m" + i, ports.get(2 * i), ports.get(2 * i + 1), root.resolve("m" + i)));
        }
        EtcdCluster cluster = new EtcdCluster(members, root);
        try {
            String initial = members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort).collect(Collectors.joining(","));
            String token = "symmem-test-" + UUID.randomUUID();
            for (Member m : members) {
                m.command = List.of(etcd.toString(),
                        "--name", m.name, "--data-dir", m.dataDir.toString(),
                        "--listen-client-urls", m.clientUrl(), "--advertise-client-urls", m.clientUrl(),
                        "--listen-peer-urls", "http://127.0.0.1:" + m.peerPort,
                        "--initial-advertise-peer-urls", "http://127.0.0.1:" + m.peerPort,
                        "--initial-cluster", initial, "--initial-cluster-token", token, "--initial-cluster-state", "new",
                        "--logger", "zap", "--log-level", "warn");
                m.launch();
            }
            cluster.awaitHealthy(HEALTHY_WITHIN, IntStream.range(0, size).toArray());
            return cluster;
        } catch (IOException | InterruptedException | RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Ports for clients and peers, below Linux's ephemeral range (32768+) so that no client's source
     * port takes one between this check and etcd's bind.
     */
    private static List<Integer> freePorts(int count) throws IOException {
        List<Integer> ports = new ArrayList<>();
        while (ports.size() < count) {
            int port = ThreadLocalRandom.current().nextInt(20000, 32000);
            if (ports.contains(port)) {
                continue;
            }
            try (ServerSocket probe = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
                ports.add(port);
            } catch (IOException taken) {
                // try another
            }
        }
        return ports;
    }

    public List<Member> members() {
        return members;
    }

    /** SYMMEM_STORE for all members. */
    public String target(String prefix) {
        return target(prefix, IntStream.range(0, members.size()).toArray());
    }

    /** SYMMEM_STORE naming only the given members. */
    public String target(String prefix, int... memberIndexes) {
        return "etcd://" + IntStream.of(memberIndexes).mapToObj(i -> members.get(i).endpoint()).collect(Collectors.joining(","))
                + "/" + prefix;
    }

    /** Waits until each given member reports itself healthy (it has a leader and answers). */
    public void awaitHealthy(Duration within, int... memberIndexes) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + within.toNanos();
        for (int i : memberIndexes) {
            Member m = members.get(i);
            String last = "no answer";
            while (true) {
                if (!m.process.isAlive()) {
                    throw new IllegalStateException("etcd member " + m.name + " exited with " + m.process.exitValue() + ": " + log(m));
                }
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(m.clientUrl() + "/health"))
                            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
                    last = r.statusCode() + " " + r.body();
                    if (r.statusCode() == 200 && r.body().contains("\"true\"")) {
                        break;
                    }
                } catch (IOException e) {
                    last = e.toString();
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("etcd member " + m.name + " not healthy within " + within + " (" + last + "): " + log(m));
                }
                Thread.sleep(50); // polling interval, not synchronization: the loop ends on the health answer
            }
        }
    }

    private static String log(Member m) {
        try {
            String text = Files.readString(m.dataDir.getParent().resolve(m.name + ".log"));
            return text.length() > 2000 ? text.substring(text.length() - 2000) : text;
        } catch (IOException e) {
            return "(no log)";
        }
    }

    /** SIGKILL: the member is gone at once, as a crashed machine. */
    public void kill(int index) throws IOException, InterruptedException {
        Member m = members.get(index);
        if (m.paused) {
            resume(index);
        }
        m.process.destroyForcibly();
        m.process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Starts a killed member again on its data directory: it comes back holding what it held. */
    public void restart(int index) throws IOException {
        members.get(index).launch();
    }

    /** SIGSTOP: the member stops answering anyone, peers and clients, but keeps its sockets. */
    public void pause(int index) throws IOException, InterruptedException {
        signal(index, "STOP");
        members.get(index).paused = true;
    }

    public void resume(int index) throws IOException, InterruptedException {
        signal(index, "CONT");
        members.get(index).paused = false;
    }

    private void signal(int index, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(members.get(index).process.pid())).start();
        if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " of etcd member " + members.get(index).name + " failed");
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            if (m.process == null) {
                continue;
            }
            try {
                if (m.paused) {
                    resume(i);
                }
            } catch (IOException | InterruptedException | RuntimeException e) {
                // killed below anyway
            }
            m.process.destroyForcibly();
        }
        for (Member m : members) {
            try {
                if (m.process != null) {
                    m.process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp directory left behind
        }
    }
}
