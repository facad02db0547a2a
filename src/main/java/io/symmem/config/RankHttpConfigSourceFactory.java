package io.symmem.config;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Gives each rank its own ports, so that the ranks of one machine never collide: the API on
 * SYMMEM_HTTP_PORT + LOCAL_RANK (on SYMMEM_HTTP_HOST, loopback unless set), health and metrics on
 * SYMMEM_MANAGEMENT_PORT + LOCAL_RANK (on SYMMEM_MANAGEMENT_HOST, every interface unless set: the
 * kubelet's probes and Prometheus come from outside the pod), and the request body limit from
 * SYMMEM_HTTP_MAX_BODY_BYTES. Ordinal 275: above application.properties, below the environment, so an
 * explicit QUARKUS_HTTP_PORT still wins.
 */
public class RankHttpConfigSourceFactory implements ConfigSourceFactory {
    static final int ORDINAL = 275;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        RankPorts ports = RankPorts.of(variable -> context.getValue(variable.property()).getValue());
        Map<String, String> properties = Map.of(
                "quarkus.http.port", Integer.toString(ports.httpPort()),
                "quarkus.http.host", ports.httpHost(),
                "quarkus.management.port", Integer.toString(ports.managementPort()),
                "quarkus.management.host", ports.managementHost(),
                "quarkus.http.limits.max-body-size", Long.toString(bodyLimit(context.getValue(
                        ConfigVariable.SYMMEM_HTTP_MAX_BODY_BYTES.property()))));
        return List.of(new MapBackedConfigSource("symmem rank HTTP port", properties, ORDINAL) {
        });
    }

    /** Bytes, from a size such as 16MiB; 16 MiB when unset or invalid (reported by the validation). */
    private static long bodyLimit(ConfigValue value) {
        try {
            return value.getValue() == null ? 16L << 20 : ByteSize.parse(value.getValue().trim());
        } catch (IllegalArgumentException e) {
            return 16L << 20;
        }
    }
}
