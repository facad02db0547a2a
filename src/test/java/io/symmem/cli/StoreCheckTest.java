package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.StoreLimits;
import io.symmem.store.server.StoreServer;
import io.vertx.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** `symmem store-check` against our own server: every check runs and passes. */
class StoreCheckTest {

    @Test
    void everyCheckPassesAgainstSymmemsServer() {
        Vertx vertx = Vertx.vertx();
        StoreServer server = new StoreServer(vertx, StoreLimits.defaults());
        try {
            int port = server.listen("127.0.0.1", 0).await().atMost(Duration.ofSeconds(5));
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            StoreCheck check = new StoreCheck(vertx, "127.0.0.1", port, new PrintStream(text, true, StandardCharsets.UTF_8));
            int notPassed = check.run();
            String report = text.toString(StandardCharsets.UTF_8);
            assertThat(notPassed).as(report).isZero();
            assertThat(check.unsupported()).isZero();
            assertThat(report).containsPattern("(?m)^2[0-9] passed, 0 failed$").doesNotContain("FAIL");
        } finally {
            server.close();
            vertx.close().toCompletionStage().toCompletableFuture().join();
        }
    }
}
