package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A smoke run of the generated pod template with `podman kube play`: the StatefulSet's pod 0 as a Pod
 * (podman runs Pods, not StatefulSets), in a world of one, the workload container replaced by this
 * test's PodWorkload on the symmem image. What a StatefulSet controller and cluster DNS would provide is
 * filled in (RANK 0 from the pod index, MASTER_ADDR 127.0.0.1) and the GPU limit is dropped (no GPU
 * here); everything else runs as generated: the sidecar's probes' port, the memory /dev/shm, the security
 * context, the ports. The management port is published on 127.0.0.1 only.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class KubePlayIT {
    private static final String IMAGE = System.getProperty("symmem.image", "localhost/symmem:latest");
    private static final Path MANIFEST = Path.of("target/kubernetes/kubernetes.yml");
    private static final Duration PATIENCE = Duration.ofSeconds(90);

    @Test
    void thePodTemplateRunsWithItsSidecar() throws Exception {
        Assumptions.assumeTrue(run(List.of("podman", "--version")).exit == 0, "skipped: no podman (install podman and runc)");
        Assumptions.assumeTrue(run(List.of("podman", "image", "exists", IMAGE)).exit == 0,
                "skipped: no image " + IMAGE + " (deploy/build-image.sh builds it before the integration tests)");
        int management = Ports.free();
        Path podFile = Files.createTempFile("symmem-pod", ".yaml");
        Pod pod = podZero(management);
        Files.writeString(podFile, Serialization.asYaml(pod));
        String podName = pod.getMetadata().getName();
        try {
            Result play = run(List.of("podman", "kube", "play", podFile.toString()));
            assertThat(play.exit).as("podman kube play:%n%s", play.out).isZero();
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            int ready = 0;
            while (ready != 200 && System.nanoTime() < deadline) {
                try {
                    ready = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/q/health/ready"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (IOException starting) {
                    ready = 0;
                }
                if (ready != 200) {
                    Thread.sleep(200);
                }
            }
            String workloadContainer = podName + "-workload";
            String state = "";
            while (System.nanoTime() < deadline) {
                state = run(List.of("podman", "inspect", workloadContainer, "--format", "{{.State.Status}} {{.State.ExitCode}}")).out.trim();
                if (state.startsWith("exited")) {
                    break;
                }
                Thread.sleep(200);
            }
            String sidecarLog = run(List.of("podman", "logs", podName + "-symmem")).out;
            String workloadLog = run(List.of("podman", "logs", workloadContainer)).out;
            assertThat(ready).as("readiness on the published management port; sidecar log:%n%s", sidecarLog).isEqualTo(200);
            assertThat(state).as("workload log:%n%s%nsidecar log:%n%s", workloadLog, sidecarLog).isEqualTo("exited 0");
            assertThat(workloadLog).contains("READY")
                    .contains("STORE http-read=200:hello over TCPStore http-write=204 tcpstore-read=hello over HTTP");
        } finally {
            Result down = run(List.of("podman", "kube", "down", podFile.toString()));
            assertThat(down.exit).as("podman kube down:%n%s", down.out).isZero();
            Files.deleteIfExists(podFile);
        }
    }

    /**
     * Pod 0 of the generated StatefulSet, filled in as described in the class comment. Its name carries this
     * run's management port: two builds running this test at once on one machine share podman's pods.
     */
    private static StatefulSet statefulSet() throws IOException {
        try (KubernetesClient offline = new KubernetesClientBuilder().build()) {
            List<HasMetadata> items = offline.load(Files.newInputStream(MANIFEST)).items();
            return items.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast).findFirst().orElseThrow();
        }
    }

    private static Pod podZero(int management) throws IOException {
        StatefulSet sts = statefulSet();
        PodSpec spec = sts.getSpec().getTemplate().getSpec();
        spec.setRestartPolicy("Never");
        fillIn(spec, Map.of("NNODES", "1", "NODE_RANK", "0", "LOCAL_WORLD_SIZE", "1", "MASTER_ADDR", "127.0.0.1"));
        Container symmem = spec.getContainers().stream().filter(c -> c.getName().equals("symmem")).findFirst().orElseThrow();
        symmem.getPorts().replaceAll(port -> "management".equals(port.getName())
                ? new ContainerPortBuilder(port).withHostIP("127.0.0.1").withHostPort(management).build() : port);
        Container workload = spec.getContainers().stream().filter(c -> c.getName().equals("workload")).findFirst().orElseThrow();
        workload.setImage(IMAGE);
        workload.setCommand(List.of("java", "-cp",
                "/workload:/opt/symmem/app/app/*:/opt/symmem/app/lib/main/*:/opt/symmem/app/lib/boot/*", "io.symmem.it.pod.PodWorkload"));
        workload.getEnv().add(new EnvVar("WORKLOAD_HOLD_WAITS", "false", null));
        workload.getVolumeMounts().add(new VolumeMountBuilder().withName("workload-classes")
                .withMountPath("/workload/io/symmem/it/pod").withReadOnly(true).build());
        spec.getVolumes().add(new VolumeBuilder().withName("workload-classes").withNewHostPath()
                .withPath(Path.of("target/test-classes/io/symmem/it/pod").toAbsolutePath().toString()).endHostPath().build());
        Map<String, String> labels = new HashMap<>(sts.getSpec().getTemplate().getMetadata().getLabels());
        labels.put("apps.kubernetes.io/pod-index", "0");
        return new PodBuilder().withNewMetadata().withName(sts.getMetadata().getName() + "-0-" + management).withLabels(labels).endMetadata()
                .withSpec(spec).build();
    }

    /**
     * What the kubelet and the StatefulSet controller would give: the variables' values (the pod index, a
     * node count for this test), each container's $(VAR) in its arguments expanded from its variables; no
     * GPU asked for (none here).
     */
    private static void fillIn(PodSpec spec, Map<String, String> filledIn) {
        for (Container container : spec.getContainers()) {
            List<EnvVar> env = new ArrayList<>();
            for (EnvVar var : container.getEnv()) {
                env.add(filledIn.containsKey(var.getName()) ? new EnvVar(var.getName(), filledIn.get(var.getName()), null) : var);
            }
            container.setEnv(env);
            Map<String, String> values = new HashMap<>();
            env.stream().filter(v -> v.getValue() != null).forEach(v -> values.put(v.getName(), v.getValue()));
            if (container.getArgs() != null) {
                container.setArgs(container.getArgs().stream().map(a -> a.startsWith("$(") && a.endsWith(")")
                        ? values.getOrDefault(a.substring(2, a.length() - 1), a) : a).toList());
            }
            Map<String, Quantity> limits = new HashMap<>(container.getResources().getLimits());
            limits.remove("nvidia.com/gpu");
            container.getResources().setLimits(limits);
        }
    }

    @Test
    void twoPodsFormOneWorldAndFormItAgainWhenOneRestarts() throws Exception {
        Assumptions.assumeTrue(run(List.of("podman", "--version")).exit == 0, "skipped: no podman (install podman and runc)");
        Assumptions.assumeTrue(run(List.of("podman", "image", "exists", IMAGE)).exit == 0,
                "skipped: no image " + IMAGE + " (deploy/build-image.sh builds it before the integration tests)");
        // Two nodes of one rank each, on the host's loopback (host network: no pod network or cluster DNS here).
        int store = Ports.free();
        int[] management = {Ports.free(), Ports.free()};
        int[] http = {Ports.free(), Ports.free()};
        List<Path> files = new ArrayList<>();
        List<String> names = new ArrayList<>();
        try {
            for (int node = 0; node < 2; node++) {
                Pod pod = nodePod(node, store, http[node], management[node]);
                Path file = Files.createTempFile("symmem-node" + node, ".yaml");
                Files.writeString(file, Serialization.asYaml(pod));
                files.add(file);
                names.add(pod.getMetadata().getName());
                Result play = run(List.of("podman", "kube", "play", file.toString()));
                assertThat(play.exit).as("podman kube play:%n%s", play.out).isZero();
            }
            for (int node = 0; node < 2; node++) {
                awaitReadyIn(management[node], 0, names);
            }
            // The pod restarted as a drained node's is: its containers stopped (SIGTERM) and started again.
            Result restart = run(List.of("podman", "pod", "restart", names.get(1)));
            assertThat(restart.exit).as("podman pod restart:%n%s", restart.out).isZero();
            for (int node = 0; node < 2; node++) {
                awaitReadyIn(management[node], 1, names);
            }
        } finally {
            for (Path file : files) {
                run(List.of("podman", "kube", "down", file.toString()));
                Files.deleteIfExists(file);
            }
        }
    }

    /** Node {@code node}'s pod of the generated StatefulSet: the sidecar alone, its ports on loopback. */
    private static Pod nodePod(int node, int store, int http, int management) throws IOException {
        StatefulSet sts = statefulSet();
        PodSpec spec = sts.getSpec().getTemplate().getSpec();
        spec.setRestartPolicy("Always");
        spec.setHostNetwork(true);
        spec.getContainers().removeIf(c -> !c.getName().equals("symmem"));
        Container symmem = spec.getContainers().get(0);
        symmem.getEnv().addAll(List.of(new EnvVar("SYMMEM_HTTP_PORT", Integer.toString(http), null),
                new EnvVar("SYMMEM_MANAGEMENT_PORT", Integer.toString(management), null),
                new EnvVar("SYMMEM_MANAGEMENT_HOST", "127.0.0.1", null)));
        fillIn(spec, Map.of("NNODES", "2", "NODE_RANK", Integer.toString(node), "LOCAL_WORLD_SIZE", "1",
                "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", Integer.toString(store)));
        // The probes name the default port; this test polls the pod's own port itself.
        symmem.setPorts(List.of());
        symmem.setStartupProbe(null);
        symmem.setLivenessProbe(null);
        symmem.setReadinessProbe(null);
        Map<String, String> labels = new HashMap<>(sts.getSpec().getTemplate().getMetadata().getLabels());
        labels.put("apps.kubernetes.io/pod-index", Integer.toString(node));
        return new PodBuilder().withNewMetadata().withName(sts.getMetadata().getName() + "-" + node + "-" + management)
                .withLabels(labels).endMetadata().withSpec(spec).build();
    }

    /** Polls the rank's readiness until it is ready in generation {@code generation} or later. */
    private static void awaitReadyIn(int management, long generation, List<String> pods) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management
                        + "/q/health/ready")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                last = ready.statusCode() + " " + ready.body();
                java.util.regex.Matcher g = java.util.regex.Pattern.compile("\"generation\": (\\d+)").matcher(ready.body());
                if (ready.statusCode() == 200 && g.find() && Long.parseLong(g.group(1)) >= generation) {
                    return;
                }
            } catch (IOException starting) {
                last = starting.toString();
            }
            Thread.sleep(200);
        }
        StringBuilder logs = new StringBuilder();
        for (String pod : pods) {
            logs.append("---- ").append(pod).append('\n').append(run(List.of("podman", "logs", pod + "-symmem")).out);
        }
        throw new AssertionError("the rank on management port " + management + " is not ready in generation " + generation
                + " (last: " + last + ")\n" + logs);
    }

    private record Result(int exit, String out) {
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putIfAbsent("CONTAINERS_CONF", Path.of("deploy/containers.conf").toAbsolutePath().toString());
        Process process;
        try {
            process = builder.start();
        } catch (IOException missing) {
            return new Result(127, missing.getMessage());
        }
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return new Result(124, out);
        }
        return new Result(process.exitValue(), out);
    }
}
