package io.symmem.stress;

import io.symmem.Symmem;
import io.symmem.SymmemGroup;
import io.symmem.SymmemWorld;
import io.symmem.SymmetricBuffer;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import io.symmem.stress.StressPlan.BufferSpec;
import io.symmem.stress.StressPlan.GroupSpec;
import io.symmem.stress.StressPlan.LaneSpec;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A stress run of one rank, as a library user writes it (Symmem.fromEnvironment, one process per
 * rank): threads drive overlapping groups and several buffers each at once, with random collectives,
 * algorithms, dtypes and sizes from a seed, every result checked; captured graphs replayed on new
 * input (StressGraphs); then misuse that must end in a clear error. Prints one summary line per rank
 * and exits 0 only with no wrong result, no stall and every misuse refused. The same class runs in CI
 * (host backend) and on GPUs (scripts/gpu/run-stress.sh, scripts/gpu/run-graphs.sh).
 *
 * <pre>
 * java -cp ... io.symmem.stress.StressMain --seed 42 --collectives 10000 [--threads 6] [--buffers 2]
 * java -cp ... io.symmem.stress.StressMain --seed 7 --faults 12 [--kill]     (FaultRounds; SYMMEM_TIMEOUT_COLLECTIVE=1s)
 * </pre>
 */
public final class StressMain {
    private StressMain() {
    }

    public static void main(String[] args) {
        int code;
        try {
            code = run(args, System.out);
        } catch (IllegalArgumentException e) {
            System.err.println("stress: " + e.getMessage());
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    public static int run(String[] args, PrintStream out) {
        Map<String, String> options = options(args);
        long seed = Long.parseLong(options.getOrDefault("--seed", "42"));
        long collectives = Long.parseLong(options.getOrDefault("--collectives", "10000"));
        int threads = Integer.parseInt(options.getOrDefault("--threads", "6"));
        int buffers = Integer.parseInt(options.getOrDefault("--buffers", "2"));
        if (options.containsKey("--faults")) {
            // Its own run: the fault rounds want a short collective deadline, which the lanes' random
            // collectives on a loaded machine would meet by chance.
            int rounds = Integer.parseInt(options.get("--faults"));
            SymmemWorld joined = joinOrSay();
            if (joined == null) {
                return 1;
            }
            try (SymmemWorld world = joined) {
                return FaultRounds.run(world, seed, rounds, options.containsKey("--kill"), world.config().timeout().collective(),
                        world.config().timeout().rendezvous(), out);
            }
        }
        SymmemWorld joined = joinOrSay();
        if (joined == null) {
            return 1;
        }
        try (SymmemWorld world = joined) {
            StressPlan plan = StressPlan.of(seed, world.size(), threads, buffers, collectives);
            StressTally tally = new StressTally();
            boolean worldHeap = world.backend().equals("nvshmem");
            Map<Integer, SymmemGroup> groups = new HashMap<>();
            Map<Integer, SymmemGroup> rests = new HashMap<>();
            for (int g = 0; g < plan.groups().size(); g++) {
                GroupSpec spec = plan.groups().get(g);
                if (spec.has(world.rank())) {
                    groups.put(g, world.group(spec.name(), spec.ranks()));
                } else if (worldHeap) {
                    GroupSpec rest = plan.restOf(g, world.size()).orElseThrow();
                    rests.put(g, world.group(rest.name(), rest.ranks()));
                }
            }
            SymmemGroup all = groups.get(0);
            Misuse.sizesThatDiffer(all, tally);
            // host and cuda: every lane allocates its buffers by name on its own thread, all at once.
            // nccl and nvshmem allocate through a collective of the whole communicator or world, paired
            // by order: there this thread allocates every lane's buffers in the plan's order, and on
            // nvshmem the ranks outside a lane's group allocate the same sizes in its rest group.
            boolean named = world.backend().equals("host") || world.backend().equals("cuda");
            Map<Integer, List<SymmetricBuffer>> laneBuffers = new java.util.concurrent.ConcurrentHashMap<>();
            Map<Integer, List<SymmetricBuffer>> restBuffers = new HashMap<>();
            for (LaneSpec lane : plan.lanes()) {
                SymmemGroup group = groups.get(lane.group());
                if (group != null && !named) {
                    laneBuffers.put(lane.id(), allocate(group, lane, false));
                } else if (group == null && worldHeap) {
                    restBuffers.put(lane.id(), allocate(rests.get(lane.group()), lane, false));
                }
            }
            Misuse.secondCallerOnOneBuffer(all, tally);
            StressGraphs.replayOnNewInput(all, tally);

            long start = System.nanoTime();
            List<Thread> running = new ArrayList<>();
            for (LaneSpec lane : plan.lanes()) {
                SymmemGroup group = groups.get(lane.group());
                if (group != null) {
                    Thread t = new Thread(() -> {
                        try {
                            List<SymmetricBuffer> own = named ? allocate(group, lane, true) : laneBuffers.get(lane.id());
                            laneBuffers.put(lane.id(), own);
                            new StressLane(seed, lane, group, own, tally).run();
                        } catch (RuntimeException e) {
                            tally.failed("lane " + lane.id() + ": allocating its buffers in group '" + group.name() + "'", e);
                        }
                    }, "stress-lane-" + lane.id());
                    t.start();
                    running.add(t);
                }
            }
            for (Thread t : running) {
                t.join();  // each lane ends: its every collective has a deadline (SYMMEM_TIMEOUT_COLLECTIVE)
            }
            Misuse.bufferOfAnotherGroup(groups, laneBuffers, plan, tally);
            double seconds = (System.nanoTime() - start) / 1e9;
            closeInPlanOrder(plan, laneBuffers, restBuffers, tally);
            all.barrier(Duration.ofSeconds(120));
            for (String line : tally.reports()) {
                out.println("stress rank " + world.rank() + ": " + line);
            }
            out.printf("stress rank %d (%s, world %d, seed %d): %d collectives in %.2f s (%.0f/s) on %d threads; "
                    + "wrong results %d, stalls %d, other failures %d; plan %d collectives over %d groups%n",
                    world.rank(), world.backend(), world.size(), seed, tally.right(), seconds, tally.right() / seconds,
                    running.size(), tally.wrong(), tally.stalls(), tally.failures(), plan.totalCollectives(),
                    plan.groups().size());
            out.println(tally.clean() ? "STRESS OK" : "STRESS FAILED");
            return tally.clean() ? 0 : 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /** The world of this rank, or null after one line on stderr saying why it could not be joined (no stack trace). */
    private static SymmemWorld joinOrSay() {
        try {
            return Symmem.fromEnvironment();
        } catch (RuntimeException e) {
            String rank = System.getenv().getOrDefault("RANK", "?");
            System.err.println("symmem stress: rank " + rank + " FAILED: " + e.getMessage());
            return null;
        }
    }

    /**
     * Every lane's buffers (or, on nvshmem, the same sizes in its rest group) closed by this thread in
     * the reverse of the plan's order, the same on every rank: on nvshmem each close is a heap call of
     * the whole world, paired by order; left to the world's close, groups would free theirs in an order
     * that differs from rank to rank.
     */
    private static void closeInPlanOrder(StressPlan plan, Map<Integer, List<SymmetricBuffer>> laneBuffers,
            Map<Integer, List<SymmetricBuffer>> restBuffers, StressTally tally) {
        for (int l = plan.lanes().size() - 1; l >= 0; l--) {
            int id = plan.lanes().get(l).id();
            List<SymmetricBuffer> own = laneBuffers.containsKey(id) ? laneBuffers.get(id) : restBuffers.get(id);
            for (int b = own == null ? -1 : own.size() - 1; b >= 0; b--) {
                try {
                    own.get(b).close();
                } catch (RuntimeException e) {
                    tally.failed("closing buffer " + b + " of lane " + id, e);
                }
            }
        }
    }

    /** A lane's buffers in its group: named after the lane (any thread, any order) or by order. */
    private static List<SymmetricBuffer> allocate(SymmemGroup group, LaneSpec lane, boolean named) {
        List<SymmetricBuffer> buffers = new ArrayList<>();
        for (int b = 0; b < lane.buffers().size(); b++) {
            BufferSpec spec = lane.buffers().get(b);
            buffers.add(named ? group.allocate("lane-" + lane.id() + "-" + b, spec.dtype(), spec.count())
                    : group.allocate(spec.dtype(), spec.count()));
        }
        return buffers;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (name.equals("--kill")) {
                options.put(name, "true");
                continue;
            }
            if (!List.of("--seed", "--collectives", "--threads", "--buffers", "--faults").contains(name) || i + 1 >= args.length) {
                throw new IllegalArgumentException("unknown option or missing value at '" + name
                        + "'; options: --seed N --collectives N --threads N --buffers N, or --seed N --faults N [--kill]");
            }
            options.put(name, args[++i]);
        }
        return options;
    }

    /** Misuse that must end in a clear error, never a stall or wrong data. */
    static final class Misuse {
        private Misuse() {
        }

        /** Every rank asks for another size: every rank fails naming the sizes. */
        static void sizesThatDiffer(SymmemGroup all, StressTally tally) {
            try (SymmetricBuffer b = all.allocate(DType.FLOAT32, 64 + all.rank())) {
                tally.misuseNotRefused("buffers of " + (64 + all.rank()) + " elements on rank " + all.rank()
                        + " of group '" + all.name() + "' (sizes differ across ranks)");
            } catch (RuntimeException e) {
                if (!String.valueOf(e.getMessage()).contains("differ")) {
                    tally.failed("sizes that differ across ranks", e);
                }
            }
        }

        /** A collective of one group on a buffer of another is refused before anything is issued. */
        static void bufferOfAnotherGroup(Map<Integer, SymmemGroup> groups, Map<Integer, List<SymmetricBuffer>> buffers,
                StressPlan plan, StressTally tally) {
            SymmemGroup all = groups.get(0);
            for (LaneSpec lane : plan.lanes()) {
                if (lane.group() != 0 && groups.containsKey(lane.group())) {
                    List<SymmetricBuffer> theirs = buffers.get(lane.id());
                    if (theirs == null) {
                        continue;  // the lane failed to allocate: already in the tally
                    }
                    SymmetricBuffer other = theirs.get(0);
                    try {
                        all.allReduce(other, ReduceOp.SUM);
                        tally.misuseNotRefused("allReduce of group '" + all.name() + "' on a buffer of group '"
                                + other.group().name() + "'");
                    } catch (IllegalArgumentException e) {
                        if (!e.getMessage().contains("belongs to group")) {
                            tally.failed("a buffer of another group", e);
                        }
                    }
                    return;
                }
            }
        }

        /**
         * Two threads of group rank 0 call allReduce on one buffer at once. The peers join only once
         * rank 0 has seen one of them refused, so whichever thread came first is still inside its call
         * when the second comes: exactly one is refused at once, whatever the timing, and the other
         * completes with the right sum.
         */
        static void secondCallerOnOneBuffer(SymmemGroup all, StressTally tally) throws InterruptedException {
            String key = "stress/second-caller-refused";
            try (SymmetricBuffer b = all.allocate(DType.FLOAT32, 1024)) {
                float[] mine = new float[1024];
                Arrays.fill(mine, all.rank() + 1);
                b.write(mine);
                if (all.rank() != 0) {
                    all.store().get(key, Duration.ofSeconds(120)).await().atMost(Duration.ofSeconds(125));
                    all.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT);
                } else {
                    List<RuntimeException> refused = java.util.Collections.synchronizedList(new ArrayList<>());
                    List<Thread> callers = new ArrayList<>();
                    for (int t = 0; t < 2; t++) {
                        Thread caller = new Thread(() -> {
                            try {
                                all.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT);
                            } catch (IllegalStateException e) {
                                refused.add(e);
                                all.store().set(key, "1".getBytes(StandardCharsets.UTF_8)).await().atMost(Duration.ofSeconds(30));
                            }
                        }, "stress-second-caller-" + t);
                        caller.start();
                        callers.add(caller);
                    }
                    for (Thread caller : callers) {
                        caller.join();
                    }
                    if (refused.size() != 1 || !refused.get(0).getMessage().contains("is running on")) {
                        tally.misuseNotRefused("a second thread calling allReduce on one buffer at once (refusals: "
                                + refused + ")");
                    }
                }
                float[] sum = new float[1024];
                b.read(sum);
                float expected = all.size() * (all.size() + 1) / 2.0f;
                if (sum[0] != expected || sum[1023] != expected) {
                    tally.wrong("second-caller check: " + sum[0] + ", expected " + expected);
                }
            } catch (RuntimeException e) {
                tally.failed("a second thread calling allReduce on one buffer at once", e);
            }
        }
    }
}
