package io.symmem;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.AbstractVerticle;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class VertxShutdownTest {
    @Test
    void aVertxThatClosesNormallyIsClosedInTime() throws Exception {
        Vertx vertx = Vertx.vertx();
        vertx.deployVerticle(new AbstractVerticle() {
        }).toCompletionStage().toCompletableFuture().get();

        assertThat(VertxShutdown.close(vertx, Duration.ofSeconds(30), 0)).isTrue();
        assertThat(vertx.deploymentIDs()).isEmpty();
    }

    @Test
    void aDeploymentWhoseStopNeverEndsDoesNotHoldTheClosePastItsLimit() throws Exception {
        Vertx vertx = Vertx.vertx();
        vertx.deployVerticle(new AbstractVerticle() {
            @Override
            public void stop(Promise<Void> stopped) {
                // never completes: a stop that hangs
            }
        }).toCompletionStage().toCompletableFuture().get();

        long start = System.nanoTime();
        boolean closed = VertxShutdown.close(vertx, Duration.ofMillis(500), 3);
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(closed).as("closed in time").isFalse();
        assertThat(took).as("how long the close waited").isGreaterThanOrEqualTo(Duration.ofMillis(500))
                .isLessThan(Duration.ofSeconds(20));
    }
}
