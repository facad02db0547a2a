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
        int base = intValue(context.getValue(ConfigVariable.SYMMEM_HTTP_PORT.property()), 8700);
        ConfigValue localRank = context.getValue(ConfigVariable.LOCAL_RANK.property());
        int offset = intValue(localRank.getValue() != null ? localRank : context.getValue(ConfigVariable.RANK.property()), 0);
        ConfigValue host = context.getValue(ConfigVariable.SYMMEM_HTTP_HOST.property());
        int managementBase = intValue(context.getValue(ConfigVariable.SYMMEM_MANAGEMENT_PORT.property()), 9700);
        ConfigValue managementHost = context.getValue(ConfigVariable.SYMMEM_MANAGEMENT_HOST.property());
        Map<String, String> properties = Map.of(
                "quarkus.http.port", Integer.toString(base + offset),
                "quarkus.http.host", host.getValue() != null ? host.getValue() : "127.0.0.1",
                "quarkus.management.port", Integer.toString(managementBase == 0 ? 0 : managementBase + offset),
                "quarkus.management.host", managementHost.getValue() != null ? managementHost.getValue() : "0.0.0.0",
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

    /** Invalid numbers are reported by the config validation, which names the variable; use the default here. */
    private static int intValue(ConfigValue value, int fallback) {
        try {
            return value.getValue() == null ? fallback : Integer.parseInt(value.getValue().trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
