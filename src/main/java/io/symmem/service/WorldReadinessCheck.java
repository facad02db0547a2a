package io.symmem.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready once this rank has joined the world (store reached, backend open, every rank met), and as
 * long as no peer and not the store has been found gone since: a world with a dead rank must not
 * receive traffic. A rank that lost its world forms it again (the next generation) and is ready again
 * once every rank is in it; meanwhile it names the ranks found gone. Liveness (the process itself) is another check's business.
 */
@Readiness
@ApplicationScoped
public class WorldReadinessCheck implements HealthCheck {
    @Inject
    RankRuntime runtime;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder response = HealthCheckResponse.named("world-rendezvous")
                .status(runtime.state() == RankRuntime.State.READY)
                .withData("state", runtime.state().name())
                .withData("rank", runtime.config().rank())
                .withData("worldSize", runtime.config().worldSize());
        if (runtime.error() != null) {
            response.withData("error", runtime.error());
        }
        String gone = runtime.ranksGone();
        if (!gone.isEmpty()) {
            response.withData("ranksGone", gone);
        }
        if (runtime.state() == RankRuntime.State.LOST) {
            response.withData("reforming", true);  // it forms the world again, as the next generation
        }
        response.withData("generation", runtime.generation());
        return response.build();
    }
}
