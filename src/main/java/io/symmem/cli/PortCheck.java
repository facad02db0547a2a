package io.symmem.cli;

import io.symmem.config.ConfigVariable;
import io.symmem.config.RankPorts;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Before a rank starts Quarkus: are its API port and its management port free? A taken one would
 * otherwise stop the rank with the HTTP server's stack trace; here it is one line that names the
 * variable, the port and what to do, as every other bad setting.
 */
final class PortCheck {
    private PortCheck() {
    }

    /** One line per port of this rank that another process holds (none when both are free). */
    static List<String> problems(Map<String, String> env, Properties properties) {
        RankPorts ports = RankPorts.of(variable -> value(variable, env, properties));
        List<String> problems = new ArrayList<>();
        // QUARKUS_HTTP_PORT / quarkus.http.port, where set, win over SYMMEM_HTTP_PORT: Quarkus then reports.
        if (env.get("QUARKUS_HTTP_PORT") == null && properties.getProperty("quarkus.http.port") == null) {
            taken(ConfigVariable.SYMMEM_HTTP_PORT, value(ConfigVariable.SYMMEM_HTTP_PORT, env, properties),
                    ports.httpHost(), ports.httpPort(), ports.offset(), "its API").ifPresent(problems::add);
        }
        if (ports.managementPort() != 0 && env.get("QUARKUS_MANAGEMENT_PORT") == null
                && properties.getProperty("quarkus.management.port") == null) {
            taken(ConfigVariable.SYMMEM_MANAGEMENT_PORT, value(ConfigVariable.SYMMEM_MANAGEMENT_PORT, env, properties),
                    ports.managementHost(), ports.managementPort(), ports.offset(), "health and metrics")
                    .ifPresent(problems::add);
        }
        return problems;
    }

    private static Optional<String> taken(ConfigVariable variable, String value, String host, int port, int offset,
            String what) {
        if (PortBlocks.bindable(host, port)) {
            return Optional.empty();
        }
        String setting = value == null ? variable.name() + " unset (" + (port - offset) + ")" : variable.name() + "=" + value;
        return Optional.of(setting + ": port " + port + " (base + LOCAL_RANK " + offset + ") on " + host + " is already in use by "
                + "another process, so this rank cannot serve " + what + " there; stop that process, or set "
                + variable.name() + " to a free port");
    }

    private static String value(ConfigVariable variable, Map<String, String> env, Properties properties) {
        String property = properties.getProperty(variable.property());
        return property != null ? property : env.get(variable.name());
    }
}
