package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.unix.Errors;
import io.quarkus.runtime.QuarkusBindException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A port taken between PortCheck and the server's bind ends the rank in one line, as PortCheck's refusal does. */
class StartFailureTest {
    static {
        // Netty's Errors (which makes its NativeIoException) needs the epoll transport's native library loaded.
        io.netty.channel.epoll.Epoll.ensureAvailability();
    }

    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final AtomicInteger exit = new AtomicInteger(-1);

    private StartFailure handler(Map<String, String> env) {
        return new StartFailure(env, new Properties(), new PrintStream(err, true, StandardCharsets.UTF_8), exit::set);
    }

    private static Throwable boundBy(String host, int port) {
        // As Quarkus hands it over: the bind failure inside the start's RuntimeException.
        return new RuntimeException("Unable to start HTTP server", new QuarkusBindException(host, port, new BindException("Address already in use")));
    }

    private String line() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theApiPortTakenAtTheBindNamesItsVariableInOneLineWithExitStatus2() {
        handler(Map.of("SYMMEM_HTTP_PORT", "21000", "LOCAL_RANK", "1")).accept(1, boundBy("127.0.0.1", 21001));
        assertThat(exit).hasValue(2);
        assertThat(line().lines().toList()).hasSize(1);
        assertThat(line()).startsWith("symmem: SYMMEM_HTTP_PORT=21000: port 21001 (base + LOCAL_RANK 1) on 127.0.0.1 is already in use "
                + "by another process").contains("set SYMMEM_HTTP_PORT to a free port").doesNotContain("Exception");
    }

    @Test
    void theManagementPortTakenAtTheBindNamesItsVariableEvenUnset() {
        handler(Map.of()).accept(1, boundBy("0.0.0.0", 9700));
        assertThat(exit).hasValue(2);
        assertThat(line()).startsWith("symmem: SYMMEM_MANAGEMENT_PORT unset (9700): port 9700 (base + LOCAL_RANK 0) on 0.0.0.0");
    }

    @Test
    void aPortSetThroughQuarkusIsNamedByItsQuarkusVariable() {
        handler(Map.of("QUARKUS_HTTP_PORT", "23456")).accept(1, boundBy("127.0.0.1", 23456));
        assertThat(exit).hasValue(2);
        assertThat(line()).isEqualTo("symmem: QUARKUS_HTTP_PORT=23456: port 23456 on 127.0.0.1 is already in use by another process; "
                + "stop that process, or set QUARKUS_HTTP_PORT to a free port" + System.lineSeparator());
    }

    @Test
    void aNormalEndKeepsItsStatusAndSaysNothing() {
        handler(Map.of()).accept(0, null);
        assertThat(exit).hasValue(0);
        assertThat(line()).isEmpty();
    }

    @Test
    void nettysBindFailureWithoutAPortNamesTheRankPortThatIsStillTaken() throws Exception {
        // Netty's epoll transport (the rank's) reports errno 98 without the port: the rank's ports are probed.
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = held.getLocalPort();
            Throwable failure = new RuntimeException("Unable to start HTTP server", new ExecutionException(
                    new Errors.NativeIoException("bind(..) failed with error(-98): Address already in use", -98)));
            handler(Map.of("SYMMEM_HTTP_PORT", Integer.toString(port), "SYMMEM_MANAGEMENT_PORT", "0")).accept(1, failure);
            assertThat(exit).hasValue(2);
            assertThat(line()).startsWith("symmem: SYMMEM_HTTP_PORT=" + port + ": port " + port + " (base + LOCAL_RANK 0) on 127.0.0.1 "
                    + "is already in use by another process");
        }
    }

    @Test
    void anotherFailureIsNotTakenForATakenPort() {
        assertThat(StartFailure.bindFailure(new RuntimeException(new IllegalStateException("no")))).isNull();
        assertThat(StartFailure.bindFailure(new Errors.NativeIoException("connect(..) failed with error(-111): Connection refused", -111)))
                .isNull();
    }
}
