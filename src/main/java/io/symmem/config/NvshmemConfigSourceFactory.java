package io.symmem.config;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.common.MapBackedConfigSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * Makes the configuration see the NVSHMEM values {@link NvshmemEnvironment} derives, each as a source
 * of its own named after its rule ("from NCCL_SOCKET_IFNAME"), so that {@code symmem config} and
 * {@code /v1/config} show where a value came from, and {@link NvshmemConfig} reads the values NVSHMEM
 * will see. Ordinal 280: below the environment (300), so a variable the user set wins here as it does
 * in NVSHMEM. (SmallRye's fallback interceptor would report the NCCL value under the environment's
 * name, and could not express "NIC mapping on because the list was copied".)
 */
public class NvshmemConfigSourceFactory implements ConfigSourceFactory {
    static final int ORDINAL = 280;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        return sources(System.getenv());
    }

    /** One source per derived value of {@code env}. */
    public static List<ConfigSource> sources(Map<String, String> env) {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(env);
        List<ConfigSource> sources = new ArrayList<>();
        for (EffectiveSetting s : nvshmem.settings()) {
            if (nvshmem.toExport().containsKey(s.variable())) {
                sources.add(new MapBackedConfigSource(s.source(), Map.of(s.property(), s.value()), ORDINAL) {
                });
            }
        }
        return sources;
    }
}
