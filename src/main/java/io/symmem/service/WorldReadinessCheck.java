package io.symmem.service;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/** Ready once this rank has joined the world (store reached, backend open, every rank met). */
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
        return response.build();
    }
}
