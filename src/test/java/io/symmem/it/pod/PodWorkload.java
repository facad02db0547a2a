package io.symmem.it.pod;

import io.symmem.store.client.BlockingStoreClient;
import io.symmem.store.client.TcpStoreClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A workload container of a pod, as PodContainersIT starts it: it shares the network and IPC namespaces
 * of its sidecar (rank 0), so the sidecar's HTTP API and management port are on 127.0.0.1 and its
 * /dev/shm is this container's. It speaks to the store as a PyTorch process would (TCPStore's protocol,
 * TcpStoreClient's TCPStore-compatible options) and to the sidecar over HTTP, then holds one wait of
 * each kind open until the sidecar is stopped, and reports how each ended. Every line it prints starts
 * with a word the test looks for; it exits 0 when it could report everything, 1 otherwise.
 * With WORKLOAD_HOLD_WAITS=false it ends after the exchange (the kube play smoke test).
 */
public final class PodWorkload {
    private static final Duration READY_PATIENCE = Duration.ofSeconds(90);
    /** Far longer than the test waits: a wait that ends, ends because the sidecar went away. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(150);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String api = "http://127.0.0.1:" + env("SYMMEM_HTTP_PORT", "8700");
    private final String management = "http://127.0.0.1:" + env("SYMMEM_MANAGEMENT_PORT", "9700");

    public static void main(String[] args) {
        try {
            new PodWorkload().run();
            System.exit(0);
        } catch (Throwable e) {
            say("FAILED " + e);
            System.exit(1);
        }
    }

    private void run() throws Exception {
        awaitReady();
        say("WORLD " + oneLine(send(HttpRequest.newBuilder(URI.create(api + "/v1/world")).GET()).body()));
        try (BlockingStoreClient store = connectStore()) {
            exchangeThroughBothDoors(store);
        }
        if (!"false".equals(env("WORKLOAD_HOLD_WAITS", "true"))) {
            // A connection of its own: TCPStore's protocol answers one request at a time per connection.
            try (BlockingStoreClient waiting = connectStore()) {
                holdWaitsUntilTheSidecarStops(waiting);
            }
        }
        say("SHM " + listShm());
    }

    private static BlockingStoreClient connectStore() {
        return BlockingStoreClient.connect(env("MASTER_ADDR", "127.0.0.1"), Integer.parseInt(env("MASTER_PORT", "29500")),
                Duration.ofSeconds(10), TcpStoreClient.Options.defaults());
    }

    /** The sidecar is ready once the world rendezvous is done; until then its readiness answers 503. */
    private void awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + READY_PATIENCE.toNanos();
        String last = "nothing";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> ready = send(HttpRequest.newBuilder(URI.create(management + "/q/health/ready")).GET());
                if (ready.statusCode() == 200) {
                    say("READY");
                    return;
                }
                last = "HTTP " + ready.statusCode();
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("the sidecar was not ready within " + READY_PATIENCE + " (last answer: " + last + ")");
    }

    /** A key set through TCPStore's protocol is read over HTTP, and the other way round. */
    private void exchangeThroughBothDoors(BlockingStoreClient store) throws IOException, InterruptedException {
        store.set("workload/from-tcpstore", "hello over TCPStore".getBytes(StandardCharsets.UTF_8)).await().atMost(Duration.ofSeconds(10));
        // A set has no answer, and the HTTP request goes over another socket that the kernel may deliver
        // first: an answered PING on the store connection proves the server has the set.
        store.ping().await().atMost(Duration.ofSeconds(10));
        HttpResponse<String> read = send(HttpRequest.newBuilder(URI.create(api + "/v1/store/keys/workload/from-tcpstore")).GET());
        HttpResponse<String> written = send(HttpRequest.newBuilder(URI.create(api + "/v1/store/keys/workload/from-http"))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofString("hello over HTTP")));
        byte[] back = store.get("workload/from-http", Duration.ofSeconds(10)).await().atMost(Duration.ofSeconds(15));
        say("STORE http-read=" + read.statusCode() + ":" + read.body() + " http-write=" + written.statusCode()
                + " tcpstore-read=" + new String(back, StandardCharsets.UTF_8));
    }

    /**
     * One long poll over HTTP and one TCPStore wait, on keys nobody sets; "WAITING" tells the test to stop
     * the sidecar. Each outcome is printed with the time it came (epoch ms, the host's clock).
     */
    private void holdWaitsUntilTheSidecarStops(BlockingStoreClient store) throws Exception {
        int baseline = pendingWaits();
        CompletableFuture<String> overHttp = http.sendAsync(
                        HttpRequest.newBuilder(URI.create(api + "/v1/store/keys/workload/never-http?wait=" + LONG_WAIT.toSeconds() + "s"))
                                .timeout(LONG_WAIT.plusSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString())
                .handle((response, error) -> error != null ? "error=" + oneLine(String.valueOf(error))
                        : "status=" + response.statusCode() + " body=" + oneLine(response.body()));
        // Its own thread: a blocked wait on the common pool (one thread on two CPUs) would hold up the HTTP
        // client's completions behind it.
        CompletableFuture<String> overTcp = CompletableFuture.supplyAsync(() -> {
            try {
                byte[] value = store.get("workload/never-tcpstore", LONG_WAIT).await().atMost(LONG_WAIT.plusSeconds(10));
                return "value=" + new String(value, StandardCharsets.UTF_8);
            } catch (RuntimeException e) {
                return "error=" + oneLine(e.toString());
            }
        }, runnable -> new Thread(runnable, "tcpstore-wait").start());
        awaitPendingWaits(baseline + 2);
        say("WAITING");
        CompletableFuture<Void> httpReported = overHttp.thenAccept(
                outcome -> say("HTTP-WAIT-ENDED at=" + System.currentTimeMillis() + " " + outcome));
        CompletableFuture<Void> tcpReported = overTcp.thenAccept(
                outcome -> say("TCPSTORE-WAIT-ENDED at=" + System.currentTimeMillis() + " " + outcome));
        CompletableFuture.allOf(httpReported, tcpReported).get(LONG_WAIT.plusSeconds(20).toSeconds(), TimeUnit.SECONDS);
    }

    /** Until the store holds {@code count} waits (the test acts only once both of this workload's are in). */
    private void awaitPendingWaits(int count) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        int now;
        while ((now = pendingWaits()) < count) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the store holds " + now + " waits, expected " + count);
            }
            Thread.sleep(50);
        }
    }

    /** The store's pending waits, as the sidecar's /v1/world reports them. */
    private int pendingWaits() throws IOException, InterruptedException {
        String world = send(HttpRequest.newBuilder(URI.create(api + "/v1/world")).GET()).body();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"pendingWaits\":(\\d+)").matcher(world);
        if (!m.find()) {
            throw new IllegalStateException("no pendingWaits in " + world);
        }
        return Integer.parseInt(m.group(1));
    }

    private static String listShm() throws IOException {
        try (Stream<Path> entries = Files.list(Path.of("/dev/shm"))) {
            List<String> names = entries.map(p -> p.getFileName().toString()).sorted().toList();
            return names.toString();
        }
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private static String oneLine(String text) {
        return text.replaceAll("\\s+", " ");
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
