package io.symmem.config;

import java.util.function.Function;

/**
 * Where a rank serves: the API on SYMMEM_HTTP_PORT + LOCAL_RANK (on SYMMEM_HTTP_HOST, loopback unless
 * set), health and metrics on SYMMEM_MANAGEMENT_PORT + LOCAL_RANK (on SYMMEM_MANAGEMENT_HOST, every
 * interface unless set; port 0: a free one). One computation for Quarkus ({@link RankHttpConfigSourceFactory})
 * and for the check that the ports are free before it starts.
 *
 * @param offset LOCAL_RANK (RANK where it is unset), added to both bases
 */
public record RankPorts(String httpHost, int httpBase, String managementHost, int managementBase, int offset) {
    static final int DEFAULT_HTTP_PORT = 8700;
    static final int DEFAULT_MANAGEMENT_PORT = 9700;

    /** From the variables' raw values ({@code value} gives null for an unset one); invalid numbers read as the default. */
    public static RankPorts of(Function<ConfigVariable, String> value) {
        String localRank = value.apply(ConfigVariable.LOCAL_RANK);
        String host = value.apply(ConfigVariable.SYMMEM_HTTP_HOST);
        String managementHost = value.apply(ConfigVariable.SYMMEM_MANAGEMENT_HOST);
        return new RankPorts(host != null ? host : "127.0.0.1",
                intValue(value.apply(ConfigVariable.SYMMEM_HTTP_PORT), DEFAULT_HTTP_PORT),
                managementHost != null ? managementHost : "0.0.0.0",
                intValue(value.apply(ConfigVariable.SYMMEM_MANAGEMENT_PORT), DEFAULT_MANAGEMENT_PORT),
                intValue(localRank != null ? localRank : value.apply(ConfigVariable.RANK), 0));
    }

    public int httpPort() {
        return httpBase + offset;
    }

    /** 0 where SYMMEM_MANAGEMENT_PORT is 0: every rank takes a free port. */
    public int managementPort() {
        return managementBase == 0 ? 0 : managementBase + offset;
    }

    /** Invalid numbers are reported by the config validation, which names the variable; use the default here. */
    private static int intValue(String value, int fallback) {
        try {
            return value == null ? fallback : Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
