package io.symmem.config;

import io.smallrye.config.common.MapBackedConfigSource;
import java.util.HashMap;
import java.util.Map;

/**
 * Exposes torchrun's unprefixed variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT) as symmem.* properties. Its ordinal sits just below the environment
 * source (300), so an explicit SYMMEM_RANK still wins, and above application.properties (250).
 */
public class TorchrunEnvConfigSource extends MapBackedConfigSource {
    public static final String NAME = "torchrun environment";
    public static final int ORDINAL = 290;

    public TorchrunEnvConfigSource() {
        this(System.getenv());
    }

    public TorchrunEnvConfigSource(Map<String, String> env) {
        super(NAME, aliases(env), ORDINAL);
    }

    private static Map<String, String> aliases(Map<String, String> env) {
        Map<String, String> properties = new HashMap<>();
        for (ConfigVariable variable : ConfigVariable.values()) {
            if (variable.isMappedByName() && env.containsKey(variable.name())) {
                properties.put(variable.property(), env.get(variable.name()));
            }
        }
        return properties;
    }
}
