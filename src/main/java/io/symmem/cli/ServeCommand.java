package io.symmem.cli;

import io.quarkus.arc.Arc;
import io.quarkus.arc.ArcContainer;
import io.quarkus.runtime.Quarkus;
import io.symmem.service.RankRuntime;
import io.symmem.service.store.HttpWaitLimit;
import jakarta.inject.Inject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "serve", description = "Runs this process as one rank: joins the world and serves HTTP until stopped.")
public class ServeCommand implements Callable<Integer> {
    /** Time for the event loops to write the answers to ended waits before the HTTP server closes. */
    private static final long ANSWER_GRACE_MS = 200;

    @Inject
    RankRuntime runtime;

    @Override
    public Integer call() {
        stopNormallyOnTerm();
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

    /**
     * Kubernetes stops a pod with SIGTERM: that is a normal end (the rank leaves in order, see
     * RankRuntime.onStop), so the exit status is 0 rather than the JVM's 143. Waits still open over HTTP
     * are answered 503 with the reason first: Quarkus' shutdown closes the HTTP server before anything
     * observes it, which would cut those callers off without an answer. Installed by SymmemMain before
     * Quarkus starts, since the rank joins (and may answer ready) before this command runs.
     */
    static void stopNormallyOnTerm() {
        TermSignal.onTerm(() -> {
            ArcContainer beans = Arc.container();
            if (beans != null && beans.isRunning() && beans.instance(HttpWaitLimit.class).get().endAll() > 0) {
                pause(ANSWER_GRACE_MS);
            }
            Quarkus.asyncExit(0);
        });
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
