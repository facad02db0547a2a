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
 * variable, the port and what to do, as every other bad setting. A port that another process takes
 * between this check and the server's bind is named the same way ({@link #takenAtBind}, for
 * {@link StartFailure}).
 */
final class PortCheck {
    private PortCheck() {
    }

    /**
     * One port the rank's HTTP server binds, and the setting that chose it.
     *
     * @param quarkus the port comes from Quarkus's own variable (QUARKUS_HTTP_PORT, ...), which wins over symmem's
     */
    private record RankPort(String variable, String value, String host, int port, int offset, String what, boolean quarkus) {
        String takenLine() {
            if (quarkus) {
                return variable + "=" + value + ": port " + port + " on " + host + " is already in use by another process; "
                        + "stop that process, or set " + variable + " to a free port";
            }
            String setting = value == null ? variable + " unset (" + (port - offset) + ")" : variable + "=" + value;
            return setting + ": port " + port + " (base + LOCAL_RANK " + offset + ") on " + host + " is already in use by "
                    + "another process, so this rank cannot serve " + what + " there; stop that process, or set "
                    + variable + " to a free port";
        }
    }

    /** One line per port of this rank that another process holds (none when both are free). */
    static List<String> problems(Map<String, String> env, Properties properties) {
        List<String> problems = new ArrayList<>();
        for (RankPort p : ports(env, properties)) {
            // A port set through Quarkus's variable is Quarkus's to report (the server's bind does, through StartFailure).
            if (!p.quarkus() && !PortBlocks.bindable(p.host(), p.port())) {
                problems.add(p.takenLine());
            }
        }
        return problems;
    }

    /**
     * The line for a port the HTTP server could not bind because another process holds it: {@code port} on
     * {@code host} where the failure says which, else (port 0) the first of this rank's ports that is still
     * taken now. Names the variable that chose the port where it is one of this rank's.
     */
    static String takenAtBind(Map<String, String> env, Properties properties, String host, int port) {
        List<RankPort> ports = ports(env, properties);
        Optional<RankPort> named = port != 0
                ? ports.stream().filter(p -> p.port() == port).findFirst()
                : ports.stream().filter(p -> p.port() > 0 && !PortBlocks.bindable(p.host(), p.port())).findFirst();
        if (named.isPresent()) {
            return named.get().takenLine();
        }
        if (port != 0) {
            return "port " + port + " on " + host + " is already in use by another process; stop that process, or choose another port";
        }
        return "a port of this rank (" + String.join(", ", ports.stream().map(p -> p.variable() + " -> " + p.port()).toList())
                + ") was already in use by another process when the server bound it; stop that process, or set those "
                + "variables to free ports";
    }

    /** The rank's API port and its management port (where not 0: a free one), each with the setting that chose it. */
    private static List<RankPort> ports(Map<String, String> env, Properties properties) {
        RankPorts ports = RankPorts.of(variable -> value(variable, env, properties));
        List<RankPort> list = new ArrayList<>();
        list.add(port(env, properties, "QUARKUS_HTTP_PORT", "quarkus.http.port", ConfigVariable.SYMMEM_HTTP_PORT, ports.httpHost(),
                ports.httpPort(), ports.offset(), "its API"));
        if (ports.managementPort() != 0) {
            list.add(port(env, properties, "QUARKUS_MANAGEMENT_PORT", "quarkus.management.port", ConfigVariable.SYMMEM_MANAGEMENT_PORT,
                    ports.managementHost(), ports.managementPort(), ports.offset(), "health and metrics"));
        }
        return list;
    }

    private static RankPort port(Map<String, String> env, Properties properties, String quarkusVariable, String quarkusProperty,
            ConfigVariable variable, String host, int port, int offset, String what) {
        String quarkus = properties.getProperty(quarkusProperty) != null ? properties.getProperty(quarkusProperty)
                : env.get(quarkusVariable);
        if (quarkus != null) {
            String name = properties.getProperty(quarkusProperty) != null ? quarkusProperty : quarkusVariable;
            int quarkusPort;
            try {
                quarkusPort = Integer.parseInt(quarkus.trim());
            } catch (NumberFormatException e) {
                quarkusPort = -1;
            }
            return new RankPort(name, quarkus, host, quarkusPort, 0, what, true);
        }
        return new RankPort(variable.name(), value(variable, env, properties), host, port, offset, what, false);
    }

    private static String value(ConfigVariable variable, Map<String, String> env, Properties properties) {
        String property = properties.getProperty(variable.property());
        return property != null ? property : env.get(variable.name());
    }
}
