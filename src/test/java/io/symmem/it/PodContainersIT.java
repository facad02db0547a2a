package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.ToStringConsumer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * The image as a pod would run it: two symmem ranks as containers (rank 0 hosts the store; rank 1 reaches
 * it by name, as a StatefulSet's pods do through a headless Service) and a workload container that shares
 * rank 0's network and IPC namespaces, as the containers of one pod do. Checks that readiness turns true
 * only after the world rendezvous, that the workload reaches its sidecar's HTTP API on 127.0.0.1 and the
 * store through TCPStore's protocol, and that SIGTERM stops rank 0 cleanly: the workload's open waits are
 * answered with an error at once, rank 0 exits 0, nothing is left in the pod's /dev/shm, and rank 1
 * learns within seconds that rank 0 is gone.
 *
 * Needs a container engine with a Docker-compatible API (bin/test starts podman's on a private socket and
 * exports DOCKER_HOST) and the image from deploy/build-image.sh (built before the integration tests).
 * Without them it is skipped, saying which is missing.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PodContainersIT {
    private static final String IMAGE = System.getProperty("symmem.image", "localhost/symmem:latest");
    private static final int MANAGEMENT = 9700;
    private static final Duration STOP_BOUND = Duration.ofSeconds(15);
    /** The sidecar answers its HTTP waits from its SIGTERM handler, before it leaves its world. */
    private static final Duration HTTP_ANSWER_BOUND = Duration.ofSeconds(3);
    private static final Pattern ENDED_AT = Pattern.compile("at=(\\d+) (.*)");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void engineAndImage() {
        Assumptions.assumeTrue(DockerClientFactory.instance().isDockerAvailable(),
                "skipped: no container engine (bin/test starts podman's API service and sets DOCKER_HOST; "
                        + "install podman and runc to run this test)");
        boolean imagePresent;
        try {
            DockerClientFactory.instance().client().inspectImageCmd(IMAGE).exec();
            imagePresent = true;
        } catch (RuntimeException absent) {
            imagePresent = false;
        }
        Assumptions.assumeTrue(imagePresent, "skipped: no image " + IMAGE + " (deploy/build-image.sh builds it; the "
                + "build runs it before the integration tests unless -Dsymmem.image.skip=true or mmdebstrap is missing)");
    }

    @Test
    void twoRanksAndAWorkloadAsPods() throws Exception {
        DockerClient docker = DockerClientFactory.instance().client();
        ToStringConsumer rank0Log = new ToStringConsumer();
        ToStringConsumer rank1Log = new ToStringConsumer();
        ToStringConsumer workloadLog = new ToStringConsumer();
        try (GenericContainer<?> rank0 = rank(0)
                .withLogConsumer(rank0Log)
                .withCreateContainerCmdModifier(cmd -> {
                    cmd.withHostName("rank0").withExposedPorts(ExposedPort.tcp(MANAGEMENT));
                    cmd.getHostConfig().withIpcMode("shareable").withPortBindings(
                            new PortBinding(Ports.Binding.bindIp("127.0.0.1"), ExposedPort.tcp(MANAGEMENT)));
                })
                .waitingFor(Wait.forLogMessage(".*rank 0 hosts the store at rank0:29500.*", 1)
                        .withStartupTimeout(Duration.ofSeconds(90)))) {
            rank0.start();
            InspectContainerResponse rank0Info = docker.inspectContainerCmd(rank0.getContainerId()).exec();
            String rank0Address = rank0Info.getNetworkSettings().getIpAddress();
            int management = publishedPort(rank0Info);
            assertThat(readiness(management)).as("rank 0 is not ready before the world is whole; its log:%n%s",
                    rank0Log.toUtf8String()).isEqualTo(503);

            try (GenericContainer<?> workload = workload(rank0.getContainerId()).withLogConsumer(workloadLog);
                    GenericContainer<?> rank1 = rank(1).withLogConsumer(rank1Log)
                            .withExtraHost("rank0", rank0Address)) {
                workload.start();
                rank1.start();
                awaitLine(workloadLog, "WAITING", Duration.ofSeconds(90), rank0Log, rank1Log);
                assertThat(readiness(management)).isEqualTo(200);
                // The image carries the native libraries unpacked: a rank unpacks nothing into $HOME at start.
                assertThat(rank0.execInContainer("sh", "-c", "ls -A \"$HOME/.javacpp\" 2>/dev/null | wc -l").getStdout().trim())
                        .as("files JavaCPP unpacked into the container's $HOME").isEqualTo("0");
                String out = workloadLog.toUtf8String();
                assertThat(out).contains("READY")
                        .containsPattern("WORLD .*\"rank\" ?: ?0.*")
                        .containsPattern("WORLD .*\"rank\" ?: ?1.*")
                        .contains("STORE http-read=200:hello over TCPStore http-write=204 tcpstore-read=hello over HTTP");

                long terminated = System.currentTimeMillis();
                docker.killContainerCmd(rank0.getContainerId()).withSignal("TERM").exec();
                long exitCode = awaitExit(docker, rank0.getContainerId(), STOP_BOUND, rank0Log);
                assertThat(exitCode).as("rank 0's exit status after SIGTERM; its log:%n%s", rank0Log.toUtf8String())
                        .isZero();

                awaitLine(workloadLog, "SHM ", STOP_BOUND, rank0Log, rank1Log);
                out = workloadLog.toUtf8String();
                // The sidecar answers its HTTP waits itself, with a reason; the store's TCPStore clients see the
                // connection close (TCPStore's protocol has no way to say more).
                assertWaitEnded(out, "HTTP-WAIT-ENDED", terminated, HTTP_ANSWER_BOUND, "status=503 body={");
                assertThat(line(out, "HTTP-WAIT-ENDED")).contains("rank 0 is stopping");
                assertWaitEnded(out, "TCPSTORE-WAIT-ENDED", terminated, STOP_BOUND, "error=io.symmem.store.StoreConnectionLostException: connection to store");
                assertThat(line(out, "SHM ")).as("/dev/shm of the pod after rank 0 stopped").isEqualTo("SHM []");
                assertThat(awaitExit(docker, workload.getContainerId(), STOP_BOUND, workloadLog)).isZero();

                awaitLine(rank1Log, "rank 0 is gone", STOP_BOUND, rank0Log, rank1Log);
            } finally {
                System.out.printf("--- rank 0%n%s--- rank 1%n%s--- workload%n%s", rank0Log.toUtf8String(),
                        rank1Log.toUtf8String(), workloadLog.toUtf8String());
            }
        }
    }

    /** Rank {@code rank} of a world of two; every rank names the store's host "rank0", as pods name rank 0's. */
    private static GenericContainer<?> rank(int rank) {
        return new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withEnv(Map.of("RANK", Integer.toString(rank), "WORLD_SIZE", "2", "MASTER_ADDR", "rank0",
                        "MASTER_PORT", "29500", "SYMMEM_BACKEND", "host", "SYMMEM_RUN_ID", "pod-test"))
                .withCommand("serve");
    }

    /** The workload: this test's PodWorkload class on the image's Java and the application's class path. */
    private static GenericContainer<?> workload(String rank0) {
        Path classes = Path.of("target/test-classes/io/symmem/it/pod").toAbsolutePath();
        return new GenericContainer<>(DockerImageName.parse(IMAGE))
                .withCopyFileToContainer(MountableFile.forHostPath(classes, 0755), "/workload/io/symmem/it/pod/")
                .withEnv(Map.of("MASTER_ADDR", "rank0", "MASTER_PORT", "29500"))
                .withCreateContainerCmdModifier(cmd -> {
                    cmd.withEntrypoint("java");
                    cmd.getHostConfig().withIpcMode("container:" + rank0).withNetworkMode("container:" + rank0);
                })
                .withCommand("-cp", "/workload:/opt/symmem/app/app/*:/opt/symmem/app/lib/main/*:/opt/symmem/app/lib/boot/*",
                        "io.symmem.it.pod.PodWorkload")
                .withStartupCheckStrategy(new org.testcontainers.containers.startupcheck.IsRunningStartupCheckStrategy());
    }

    private static int publishedPort(InspectContainerResponse info) {
        Ports.Binding[] bindings = info.getNetworkSettings().getPorts().getBindings().get(ExposedPort.tcp(MANAGEMENT));
        assertThat(bindings).as("management port published").isNotEmpty();
        assertThat(bindings[0].getHostIp()).as("published on loopback only").isEqualTo("127.0.0.1");
        return Integer.parseInt(bindings[0].getHostPortSpec());
    }

    private int readiness(int port) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/health/ready"))
                .timeout(Duration.ofSeconds(10)).GET().build();
        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static void assertWaitEnded(String out, String prefix, long terminated, Duration bound, String expected) {
        String reported = line(out, prefix);
        Matcher ended = ENDED_AT.matcher(reported);
        assertThat(ended.find()).as("%s reports when it ended: %s", prefix, reported).isTrue();
        long after = Long.parseLong(ended.group(1)) - terminated;
        assertThat(after).as("%s came %d ms after SIGTERM (%s)", prefix, after, reported)
                .isLessThan(bound.toMillis());
        assertThat(ended.group(2)).as("%s is an error, not a value", prefix).startsWith(expected);
    }

    private static String line(String out, String prefix) {
        return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("(no line " + prefix + ")");
    }

    private static void awaitLine(ToStringConsumer log, String text, Duration patience, ToStringConsumer... others)
            throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (!log.toUtf8String().contains(text)) {
            if (System.nanoTime() > deadline) {
                List<String> context = new ArrayList<>();
                for (ToStringConsumer other : others) {
                    context.add(other.toUtf8String());
                }
                throw new AssertionError("no '" + text + "' within " + patience + " in:\n" + log.toUtf8String()
                        + "\nother containers:\n" + String.join("\n---\n", context));
            }
            Thread.sleep(100);
        }
    }

    private static long awaitExit(DockerClient docker, String id, Duration patience, ToStringConsumer log)
            throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            InspectContainerResponse.ContainerState state = docker.inspectContainerCmd(id).exec().getState();
            if (!Boolean.TRUE.equals(state.getRunning())) {
                return state.getExitCodeLong();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("container still running " + patience + " after SIGTERM; its log:\n" + log.toUtf8String());
            }
            Thread.sleep(100);
        }
    }
}
