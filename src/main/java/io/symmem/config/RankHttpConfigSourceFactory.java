package io.symmem.config;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Gives each rank its own HTTP port, SYMMEM_HTTP_PORT + LOCAL_RANK, and its interface, so that the
 * ranks of one machine never collide. Ordinal 275: above application.properties, below the
 * environment, so an explicit QUARKUS_HTTP_PORT still wins.
 */
public class RankHttpConfigSourceFactory implements ConfigSourceFactory {
    static final int ORDINAL = 275;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        int base = intValue(context.getValue(ConfigVariable.SYMMEM_HTTP_PORT.property()), 8700);
        ConfigValue localRank = context.getValue(ConfigVariable.LOCAL_RANK.property());
        int offset = intValue(localRank.getValue() != null ? localRank : context.getValue(ConfigVariable.RANK.property()), 0);
        ConfigValue host = context.getValue(ConfigVariable.SYMMEM_HTTP_HOST.property());
        Map<String, String> properties = Map.of(
                "quarkus.http.port", Integer.toString(base + offset),
                "quarkus.http.host", host.getValue() != null ? host.getValue() : "127.0.0.1");
        return List.of(new MapBackedConfigSource("symmem rank HTTP port", properties, ORDINAL) {
        });
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
