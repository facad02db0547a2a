package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A rank whose API or management port another process holds stops as for any bad setting: exit
 * status 2 and one line on stderr naming the variable, the port and what to do; no stack trace. So
 * does one whose port is found taken only at the server's bind.
 */
class PortInUseIT {

    private static void refusedWhileHeld(String variable, String expected, Map<String, String> env) throws Exception {
        try (ServerSocket held = new ServerSocket(Ports.freeBlock(1), 1, InetAddress.getLoopbackAddress())) {
            int port = held.getLocalPort();
            Map<String, String> all = new java.util.HashMap<>(env);
            all.putAll(Map.of("WORLD_SIZE", "1", "RANK", "0", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "0",
                    "SYMMEM_BACKEND", "host", variable, Integer.toString(port)));
            try (RankProcess p = RankProcess.startSeparatingStderr("port-in-use", all, "serve")) {
                int exit = p.exitCode(60);
                String err = p.errors();
                assertThat(exit).as("exit of serve with %s=%d held; stderr:%n%s", variable, port, err).isEqualTo(2);
                assertThat(err.lines().toList()).as("stderr of serve with %s=%d held", variable, port).hasSize(1);
                assertThat(err).startsWith("symmem: " + variable + "=" + port + ": port " + port + " (base + LOCAL_RANK 0) on "
                        + expected + " is already in use by another process")
                        .contains("set " + variable + " to a free port")
                        .doesNotContain("Exception").doesNotContain("\tat ");
                assertThat(p.output()).as("stdout").isEmpty();
            }
        }
    }

    @Test
    void aTakenApiPortStopsTheRankInOneLine() throws Exception {
        refusedWhileHeld("SYMMEM_HTTP_PORT", "127.0.0.1", Map.of());
    }

    @Test
    void aTakenManagementPortStopsTheRankInOneLine() throws Exception {
        // The management port listens on every interface by default: a loopback listener already blocks it.
        refusedWhileHeld("SYMMEM_MANAGEMENT_PORT", "0.0.0.0", Map.of());
    }

    @Test
    void aPortFoundTakenOnlyAtTheServersBindStopsTheRankInOneLine() throws Exception {
        // A port chosen through Quarkus's own variable is not checked before the start (Quarkus's value wins):
        // the server's bind is the first to find it taken, as when another process takes a port after the check.
        try (ServerSocket held = new ServerSocket(Ports.freeBlock(1), 1, InetAddress.getLoopbackAddress())) {
            int port = held.getLocalPort();
            Map<String, String> env = Map.of("WORLD_SIZE", "1", "RANK", "0", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "0",
                    "SYMMEM_BACKEND", "host", "QUARKUS_HTTP_PORT", Integer.toString(port));
            try (RankProcess p = RankProcess.startSeparatingStderr("port-taken-at-bind", env, "serve")) {
                int exit = p.exitCode(60);
                String err = p.errors();
                assertThat(exit).as("exit of serve with QUARKUS_HTTP_PORT=%d held; stderr:%n%s", port, err).isEqualTo(2);
                assertThat(err.lines().toList()).as("stderr of serve with QUARKUS_HTTP_PORT=%d held", port).hasSize(1);
                assertThat(err).startsWith("symmem: QUARKUS_HTTP_PORT=" + port + ": port " + port + " on 127.0.0.1 is already in use")
                        .contains("set QUARKUS_HTTP_PORT to a free port").doesNotContain("Exception").doesNotContain("\tat ");
            }
        }
    }
}
