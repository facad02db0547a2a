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
    private static Pod podZero(int management) throws IOException {
        StatefulSet sts;
        try (KubernetesClient offline = new KubernetesClientBuilder().build()) {
            List<HasMetadata> items = offline.load(Files.newInputStream(MANIFEST)).items();
            sts = items.stream().filter(StatefulSet.class::isInstance).map(StatefulSet.class::cast).findFirst().orElseThrow();
        }
        PodSpec spec = sts.getSpec().getTemplate().getSpec();
        spec.setRestartPolicy("Never");
        Map<String, String> filledIn = Map.of("RANK", "0", "WORLD_SIZE", "1", "MASTER_ADDR", "127.0.0.1");
        for (Container container : spec.getContainers()) {
            List<EnvVar> env = new ArrayList<>();
            for (EnvVar var : container.getEnv()) {
                env.add(filledIn.containsKey(var.getName()) ? new EnvVar(var.getName(), filledIn.get(var.getName()), null) : var);
            }
            container.setEnv(env);
            Map<String, Quantity> limits = new HashMap<>(container.getResources().getLimits());
            limits.remove("nvidia.com/gpu");
            container.getResources().setLimits(limits);
        }
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
