package io.symmem.cli;

import io.symmem.cli.common.ByteSizeConverter;
import io.symmem.collective.AllReduce;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.liveness.Liveness;
import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import io.symmem.service.RankRuntime;
import io.symmem.store.StoreExchange;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * One rank of `symmem chaos`: joins the world, runs one phase's work in a loop until a peer is found
 * gone (or --max-seconds pass), and prints machine-readable lines for the driver: when the phase
 * started, and when and how liveness reported the failure. Exits 1 when the world failed (with the
 * error the interrupted operation raised), 3 when nothing happened.
 */
@Command(name = "chaos-rank", hidden = true,
        description = "The workload of one rank under `symmem chaos`: loops in one phase until a peer dies.")
public class ChaosRankCommand implements Callable<Integer> {
    static final String PHASE_LINE = "CHAOS-PHASE";
    static final String DETECTED_LINE = "CHAOS-DETECTED";
    static final int EXIT_NOTHING_HAPPENED = 3;

    @Inject
    RankRuntime runtime;

    @Option(names = "--phase", defaultValue = "collective", converter = ChaosPhaseConverter.class,
            description = "rendezvous, collective, barrier, store or idle (default ${DEFAULT-VALUE}).")
    ChaosPhase phase;

    @Option(names = "--size", defaultValue = "1MiB", converter = ByteSizeConverter.class,
            description = "Symmetric buffer size (default ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--max-seconds", defaultValue = "120", description = "Give up after this long if no peer dies (default ${DEFAULT-VALUE}).")
    int maxSeconds;

    @Override
    public Integer call() {
        int rank = runtime.config().rank();
        CountDownLatch failed = new CountDownLatch(1);
        try {
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            Liveness liveness = runtime.liveness();
            liveness.whenFailed(f -> {
                System.out.println(DETECTED_LINE + " " + f.at().toEpochMilli() + " " + f.rankList() + " " + f.reason());
                System.out.flush();
                failed.countDown();
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(maxSeconds);
            new Workload(runtime, phase, size, deadline, failed).run();
            System.err.println("symmem chaos-rank: rank " + rank + ": no peer died within " + maxSeconds + " s");
            return EXIT_NOTHING_HAPPENED;
        } catch (RuntimeException e) {
            System.out.println("symmem chaos-rank: rank " + rank + " FAILED: " + e.getMessage());
            return 1;
        }
    }

    /** The loop of one phase. Returns only when the deadline passed; a failed world ends it with its error. */
    private record Workload(RankRuntime runtime, ChaosPhase phase, long size, long deadline, CountDownLatch failed) {
        void run() {
            // This generation's liveness: once the world fails, the runtime forms it again under a new
            // member, whose liveness knows nothing of the failure this loop must stop on.
            Liveness liveness = runtime.liveness();
            int rank = runtime.config().rank();
            int world = runtime.config().worldSize();
            StoreExchange group = runtime.exchange("chaos", rank, world);
            Duration rendezvous = runtime.config().timeout().rendezvous();
            Duration collective = runtime.config().timeout().collective();
            announce();
            switch (phase) {
                case RENDEZVOUS -> {
                    while (going(liveness)) {
                        runtime.allocator().allocate(group, size, rendezvous).close();
                    }
                }
                case STORE -> {
                    while (going(liveness)) {
                        group.barrier(rendezvous).await().indefinitely();
                    }
                }
                case COLLECTIVE, BARRIER -> {
                    try (SymmetricMemory memory = runtime.allocator().allocate(group, size, rendezvous);
                            LocalBuffer out = memory.allocateLocal(size)) {
                        long count = size / DType.FLOAT32.bytes();
                        while (going(liveness)) {
                            if (phase == ChaosPhase.BARRIER) {
                                memory.barrier(1);
                            } else {
                                AllReduce.run(memory, Algorithm.AUTO, DType.FLOAT32, ReduceOp.SUM, count, out, null, collective);
                                memory.synchronize(null);
                            }
                        }
                    }
                }
                case IDLE -> idle();
            }
            liveness.check(phase.id());
        }

        private void announce() {
            System.out.println(PHASE_LINE + " " + phase.id() + " " + System.currentTimeMillis());
            System.out.flush();
        }

        /**
         * Until the deadline; a failed world ends the loop with its error before the next call, which
         * would otherwise start after the abort was undone for the next generation and wait its deadline.
         */
        private boolean going(Liveness liveness) {
            liveness.check(phase.id());
            return System.nanoTime() < deadline;
        }

        private void idle() {
            try {
                failed.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
