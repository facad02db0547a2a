package io.symmem.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The build's last word on the Kubernetes manifests (run by Maven after quarkus-kubernetes wrote
 * target/kubernetes/kubernetes.yml): the job's shape is set once, as the sidecar's NNODES and
 * LOCAL_WORLD_SIZE (from application.properties' job.nodes and job.gpus-per-node), and this gives the
 * workload container the same two numbers and every GPU of its node. Then it writes the variant
 * kubernetes-dra.yml, in which the workload and the sidecar share the node's GPUs through one Dynamic
 * Resource Allocation claim (a ResourceClaimTemplate, one claim per pod, named by both containers) and
 * the sidecar's groups run on them (SYMMEM_BACKEND=cuda): a device-plugin GPU is never shared between
 * containers, a claim is.
 *
 * <pre>{@code
 * java -cp ... io.symmem.deploy.JobManifests target/kubernetes
 * }</pre>
 */
public final class JobManifests {
    static final String GPU = "nvidia.com/gpu";
    static final String CLAIM = "gpus";
    static final String CLAIM_TEMPLATE = "symmem-gpus";
    /** NVIDIA's DRA driver's class of whole GPUs (k8s-dra-driver-gpu). */
    static final String DEVICE_CLASS = "gpu.nvidia.com";
    private static final YAMLMapper YAML = YAMLMapper.builder(YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER).build()).build();

    private JobManifests() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/kubernetes");
        Path generated = dir.resolve("kubernetes.yml");
        List<ObjectNode> documents = read(generated);
        Files.writeString(generated, write(withWorkloadShape(documents)), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("kubernetes-dra.yml"), write(draVariant(read(generated))), StandardCharsets.UTF_8);
    }

    /** The workload gets the sidecar's NNODES and LOCAL_WORLD_SIZE, and LOCAL_WORLD_SIZE GPUs. */
    static List<ObjectNode> withWorkloadShape(List<ObjectNode> documents) {
        ObjectNode podSpec = podSpec(documents);
        ObjectNode symmem = container(podSpec, "symmem");
        ObjectNode workload = container(podSpec, "workload");
        String gpus = envValue(symmem, "LOCAL_WORLD_SIZE");
        for (String name : List.of("NNODES", "LOCAL_WORLD_SIZE")) {
            setEnv(workload, name, envValue(symmem, name));
        }
        limits(workload).put(GPU, gpus);
        limits(symmem).remove(GPU);
        return documents;
    }

    /**
     * The same job with the node's GPUs in one DRA claim: no device-plugin limit; a ResourceClaimTemplate
     * of LOCAL_WORLD_SIZE GPUs; the pod's claim named by both containers; the sidecar on the GPUs.
     */
    static List<ObjectNode> draVariant(List<ObjectNode> documents) {
        ObjectNode podSpec = podSpec(documents);
        ObjectNode symmem = container(podSpec, "symmem");
        String gpus = envValue(symmem, "LOCAL_WORLD_SIZE");
        for (String name : List.of("symmem", "workload")) {
            ObjectNode c = container(podSpec, name);
            limits(c).remove(GPU);
            ObjectNode resources = (ObjectNode) c.get("resources");
            ArrayNode claims = resources.putArray("claims");
            claims.addObject().put("name", CLAIM);
        }
        setEnv(symmem, "SYMMEM_BACKEND", "cuda");
        ArrayNode podClaims = podSpec.putArray("resourceClaims");
        podClaims.addObject().put("name", CLAIM).put("resourceClaimTemplateName", CLAIM_TEMPLATE);
        List<ObjectNode> out = new ArrayList<>(documents);
        out.add(claimTemplate(Integer.parseInt(gpus)));
        return out;
    }

    private static ObjectNode claimTemplate(int gpus) {
        ObjectNode template = JsonNodeFactory.instance.objectNode();
        template.put("apiVersion", "resource.k8s.io/v1").put("kind", "ResourceClaimTemplate");
        template.putObject("metadata").put("name", CLAIM_TEMPLATE).putObject("labels")
                .put("app.kubernetes.io/name", "symmem").put("app.kubernetes.io/part-of", "symmem");
        ObjectNode request = template.putObject("spec").putObject("spec").putObject("devices").putArray("requests").addObject();
        request.put("name", CLAIM);
        request.putObject("exactly").put("deviceClassName", DEVICE_CLASS).put("allocationMode", "ExactCount").put("count", gpus);
        return template;
    }

    static ObjectNode podSpec(List<ObjectNode> documents) {
        for (ObjectNode d : documents) {
            if ("StatefulSet".equals(d.path("kind").asText())) {
                return (ObjectNode) d.path("spec").path("template").path("spec");
            }
        }
        throw new IllegalStateException("no StatefulSet in the generated manifest");
    }

    static ObjectNode container(ObjectNode podSpec, String name) {
        for (JsonNode c : podSpec.path("containers")) {
            if (name.equals(c.path("name").asText())) {
                return (ObjectNode) c;
            }
        }
        throw new IllegalStateException("no container '" + name + "' in the StatefulSet's pod");
    }

    static String envValue(ObjectNode container, String name) {
        for (JsonNode e : container.path("env")) {
            if (name.equals(e.path("name").asText()) && e.has("value")) {
                return e.get("value").asText();
            }
        }
        throw new IllegalStateException("container '" + container.path("name").asText() + "' has no " + name + " value");
    }

    private static void setEnv(ObjectNode container, String name, String value) {
        ArrayNode env = container.has("env") ? (ArrayNode) container.get("env") : container.putArray("env");
        for (JsonNode e : env) {
            if (name.equals(e.path("name").asText())) {
                ((ObjectNode) e).removeAll().put("name", name).put("value", value);
                return;
            }
        }
        env.addObject().put("name", name).put("value", value);
    }

    private static ObjectNode limits(ObjectNode container) {
        ObjectNode resources = container.has("resources") ? (ObjectNode) container.get("resources") : container.putObject("resources");
        return resources.has("limits") ? (ObjectNode) resources.get("limits") : resources.putObject("limits");
    }

    static List<ObjectNode> read(Path file) throws IOException {
        List<ObjectNode> documents = new ArrayList<>();
        try (MappingIterator<ObjectNode> it = YAML.readerFor(ObjectNode.class).readValues(file.toFile())) {
            while (it.hasNext()) {
                documents.add(it.next());
            }
        }
        return documents;
    }

    static String write(List<ObjectNode> documents) throws IOException {
        StringWriter out = new StringWriter();
        for (int i = 0; i < documents.size(); i++) {
            if (i > 0) {
                out.write("---\n");
            }
            out.write(YAML.writeValueAsString(documents.get(i)));
        }
        return out.toString();
    }
}
