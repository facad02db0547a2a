package io.symmem.cli;

import io.quarkus.runtime.Quarkus;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import sun.misc.Signal;

@Command(name = "serve", description = "Runs this process as one rank: joins the world and serves HTTP until stopped.")
public class ServeCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Override
    public Integer call() {
        // Kubernetes stops a pod with SIGTERM: that is a normal end (the rank leaves in order, see
        // RankRuntime.onStop), so the exit status is 0 rather than the JVM's 143.
        Signal.handle(new Signal("TERM"), signal -> Quarkus.asyncExit(0));
        runtime.start();
        try {
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
        } catch (RuntimeException e) {
            System.err.println("symmem serve: rank " + runtime.config().rank() + ": " + e.getMessage());
            return 1;
        }
        Quarkus.waitForExit();
        return 0;
    }
}
