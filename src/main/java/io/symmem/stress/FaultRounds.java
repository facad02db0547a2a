package io.symmem.stress;

import io.symmem.BufferPool;
import io.symmem.SymmemGroup;
import io.symmem.SymmemWorld;
import io.symmem.SymmetricBuffer;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Seeded fault injection on the world group (`symmem stress --faults N [--kill]`): rounds of late
 * ranks past the collective deadline, closes during calls, unnamed allocations crossed between two
 * threads, pools made by two threads in different orders, a second caller refused on one rank, and
 * (with --kill) a rank killed in the middle of a collective. Every result is checked exactly (integer
 * inputs, so the float32 sum is the float64 one); a refusal with a message is counted as clean, a
 * wrong result or an exception without one as a defect, and a round that does not end within its
 * watchdog as a hang (the rank then exits at once). Every rank draws the same plan from the seed.
 * The collective deadline (SYMMEM_TIMEOUT_COLLECTIVE) should be short (1 s): late ranks sleep past it.
 */
final class FaultRounds {
    enum Kind { LATE, CLOSE_DURING_CALL, CROSSED_ALLOCATIONS, CROSSED_POOLS, SECOND_CALLER }

    private static final int COUNT = 4096;
    private static final int CALLS_AFTER = 5;
    private static final Duration WATCHDOG = Duration.ofSeconds(90);

    private final SymmemWorld world;
    private final SymmemGroup group;
    private final Duration deadline;
    private final Duration rendezvous;
    private final AtomicLong right = new AtomicLong();
    private final AtomicLong wrong = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLong defects = new AtomicLong();
    private final List<String> reports = new ArrayList<>();

    private FaultRounds(SymmemWorld world, Duration deadline, Duration rendezvous) {
        this.world = world;
        this.group = world.group();
        this.deadline = deadline;
        this.rendezvous = rendezvous;
    }

    /** Runs {@code rounds} seeded rounds (then the kill, if asked); prints the tally; 0 when no defect. */
    static int run(SymmemWorld world, long seed, int rounds, boolean kill, Duration deadline, Duration rendezvous,
            PrintStream out) {
        FaultRounds f = new FaultRounds(world, deadline, rendezvous);
        Random plan = new Random(seed);
        Kind[] kinds = Kind.values();
        long start = System.nanoTime();
        java.util.Map<Kind, Integer> drawn = new java.util.EnumMap<>(Kind.class);
        for (int r = 0; r < rounds; r++) {
            Kind kind = kinds[plan.nextInt(kinds.length)];
            int victim = 1 + plan.nextInt(world.size() - 1);
            drawn.merge(kind, 1, Integer::sum);
            f.guarded(r, kind, victim);
        }
        int killed = kill ? 1 + plan.nextInt(world.size() - 1) : -1;
        long killNotice = kill ? f.killRound(killed) : -1;
        double seconds = (System.nanoTime() - start) / 1e9;
        for (String line : f.reports()) {
            out.println("faults rank " + world.rank() + ": " + line);
        }
        out.printf("faults rank %d (%s, world %d, seed %d): %d rounds %s in %.1f s; right %d, wrong %d, defects %d, hangs 0,"
                + " clean refusals %d%s%n", world.rank(), world.backend(), world.size(), seed, rounds, drawn, seconds, f.right.get(),
                f.wrong.get(), f.defects.get(), f.refusals.get(),
                kill ? "; rank " + killed + " killed, seen gone after " + killNotice + " ms" : "");
        boolean clean = f.wrong.get() == 0 && f.defects.get() == 0;
        out.println(clean ? "FAULTS OK" : "FAULTS FAILED");
        return clean ? 0 : 1;
    }

    /** One round under a watchdog: past it the rank reports the hang and exits at once (status 4). */
    private void guarded(int round, Kind kind, int victim) {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(WATCHDOG.toMillis());
                System.out.println("faults rank " + world.rank() + ": HANG in round " + round + " (" + kind + ", victim "
                        + victim + ") after " + WATCHDOG.toSeconds() + " s");
                System.out.println("FAULTS FAILED");
                System.out.flush();
                Runtime.getRuntime().halt(4);
            } catch (InterruptedException ended) {
                // the round ended in time
            }
        }, "faults-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            group.barrier(rendezvous);
            switch (kind) {
                case LATE -> late(round, victim);
                case CLOSE_DURING_CALL -> closeDuringCall(round, victim);
                case CROSSED_ALLOCATIONS -> crossedAllocations(round);
                case CROSSED_POOLS -> crossedPools(round);
                case SECOND_CALLER -> secondCaller(round, victim);
            }
        } catch (RuntimeException | InterruptedException e) {
            defect("round " + round + " (" + kind + ") ended with " + e);
        } finally {
            watchdog.interrupt();
        }
    }

    /** The victim comes past the deadline; then every rank runs more checked calls on the same buffer. */
    private void late(int round, int victim) throws InterruptedException {
        try (SymmetricBuffer b = group.allocate(DType.FLOAT32, COUNT)) {
            group.barrier(rendezvous);
            if (world.rank() == victim) {
                Thread.sleep(deadline.toMillis() + 500);
            }
            for (int k = 0; k <= CALLS_AFTER; k++) {
                checkedAllReduce(b, round, k, "late");
            }
            group.barrier(rendezvous);  // every rank is done with b before it goes
        }
    }

    /** A thread is inside an all-reduce (the victim comes a little late) when another closes the buffer. */
    private void closeDuringCall(int round, int victim) throws InterruptedException {
        SymmetricBuffer b = group.allocate(DType.FLOAT32, COUNT);
        group.barrier(rendezvous);
        java.util.concurrent.CountDownLatch calling = new java.util.concurrent.CountDownLatch(1);
        Thread call = new Thread(() -> {
            try {
                if (world.rank() == victim) {
                    Thread.sleep(deadline.toMillis() / 4);
                }
                checkedAllReduce(b, round, 0, "close-during-call", calling::countDown);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                calling.countDown();
            }
        }, "faults-call");
        call.start();
        calling.await();
        Thread.sleep(20);  // inside its call by now (if not, the call is refused: the buffer is closing)
        try {
            b.close();  // waits for the call inside, or is refused: never frees under it
        } catch (RuntimeException refused) {
            refused(refused);
        }
        call.join(WATCHDOG.toMillis());
        group.barrier(rendezvous);
        try {
            b.close();  // closed already, unless the close above was refused
        } catch (RuntimeException refused) {
            refused(refused);
        }
    }

    /** Unnamed allocations from threads A and B, one after the other, in opposite orders on odd and even ranks. */
    private void crossedAllocations(int round) throws InterruptedException {
        boolean aFirst = world.rank() % 2 == 0;
        SymmetricBuffer[] got = new SymmetricBuffer[2];
        for (int turn = 0; turn < 2; turn++) {
            int t = aFirst ? turn : 1 - turn;
            Thread allocator = new Thread(() -> {
                try {
                    got[t] = group.allocate(DType.FLOAT32, COUNT);
                } catch (RuntimeException refused) {
                    refused(refused);
                }
            }, "faults-" + (t == 0 ? "A" : "B"));
            allocator.start();
            allocator.join(WATCHDOG.toMillis());
        }
        runOnBoth(t -> {
            if (got[t] != null) {
                for (int k = 0; k < CALLS_AFTER; k++) {
                    checkedAllReduce(got[t], round * 10 + t, k, "crossed allocation");
                }
            }
        });
        group.barrier(rendezvous);
        for (SymmetricBuffer b : got) {
            if (b != null) {
                b.close();
            }
        }
    }

    /** Threads A and B each make a pool and a block, the second starting once the first has begun. */
    private void crossedPools(int round) throws InterruptedException {
        boolean aFirst = world.rank() % 2 == 0;
        BufferPool[] pools = new BufferPool[2];
        java.util.concurrent.CountDownLatch firstBegan = new java.util.concurrent.CountDownLatch(1);
        int first = aFirst ? 0 : 1;
        runOnBoth(t -> {
            try {
                if (t != first) {
                    firstBegan.await();
                    Thread.sleep(50);
                } else {
                    firstBegan.countDown();
                }
                pools[t] = group.pool();
                SymmetricBuffer block = pools[t].allocate(DType.FLOAT32, COUNT);
                for (int k = 0; k < CALLS_AFTER; k++) {
                    checkedAllReduce(block, round * 10 + t, k, "pool per thread");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException refused) {
                refused(refused);
            }
        });
        group.barrier(rendezvous);  // every rank is done with the blocks before they go
        for (BufferPool pool : pools) {
            if (pool != null) {
                pool.close();
            }
        }
    }

    /**
     * On the victim a second thread calls while the first is inside: one of the two is refused (the
     * second, unless it got in first), and the one that ran is right.
     */
    private void secondCaller(int round, int victim) throws InterruptedException {
        try (SymmetricBuffer b = group.allocate(DType.FLOAT32, COUNT)) {
            group.barrier(rendezvous);
            if (world.rank() != victim) {
                Thread.sleep(300);  // the victim's first caller is inside, waiting for this rank
                checkedAllReduce(b, round, 0, "second caller");
            } else {
                java.util.concurrent.CountDownLatch written = new java.util.concurrent.CountDownLatch(1);
                boolean[] firstRight = new boolean[1];
                Thread first = new Thread(() -> firstRight[0] = checkedAllReduce(b, round, 0, "second caller", written::countDown),
                        "faults-first-caller");
                first.start();
                written.await();
                Thread.sleep(20);
                boolean secondRan;
                try {
                    group.allReduce(b, ReduceOp.SUM);  // the input is the first caller's, written already
                    secondRan = true;
                } catch (RuntimeException refused) {
                    refused(refused);
                    secondRan = false;
                }
                first.join(WATCHDOG.toMillis());
                if (secondRan && firstRight[0]) {
                    defect("round " + round + ": two callers on one buffer at once both ran");
                }
            }
            group.barrier(rendezvous);
        }
    }

    /** The victim halts while every other rank is inside an all-reduce; they must be told within seconds. */
    private long killRound(int victim) {
        SymmetricBuffer b;
        try {
            group.barrier(rendezvous);
            b = group.allocate(DType.FLOAT32, COUNT);
            group.barrier(rendezvous);
        } catch (RuntimeException e) {
            defect("the kill round could not start: " + e);
            return -1;
        }
        if (world.rank() == victim) {
            System.out.println("faults rank " + victim + ": killed now (the kill round)");
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }
        long t0 = System.nanoTime();
        checkedAllReduce(b, -1, 0, "kill");
        long noticedMs = (System.nanoTime() - t0) / 1_000_000;
        try {
            b.close();
        } catch (RuntimeException afterTheWorldFailed) {
            refused(afterTheWorldFailed);
        }
        return noticedMs;
    }

    /** Writes call k's input, all-reduces, and checks every element; a refusal with a message is clean. */
    private boolean checkedAllReduce(SymmetricBuffer b, int round, int k, String what) {
        return checkedAllReduce(b, round, k, what, () -> { });
    }

    /** As above, running {@code written} between the write and the call; true when the call was right. */
    private boolean checkedAllReduce(SymmetricBuffer b, int round, int k, String what, Runnable written) {
        int rank = world.rank();
        float[] mine = new float[COUNT];
        for (int i = 0; i < COUNT; i++) {
            mine[i] = value(rank, round, k, i);
        }
        try {
            b.write(mine);
            written.run();
            group.allReduce(b, ReduceOp.SUM);
            float[] sum = new float[COUNT];
            b.read(sum);
            for (int i = 0; i < COUNT; i++) {
                double want = 0;
                for (int r = 0; r < world.size(); r++) {
                    want += value(r, round, k, i);
                }
                if (sum[i] != want) {
                    wrong.incrementAndGet();
                    report("WRONG " + what + " round " + round + " call " + k + " [" + i + "]: " + sum[i] + " where " + want
                            + " is right");
                    return false;
                }
            }
            right.incrementAndGet();
            return true;
        } catch (RuntimeException e) {
            refused(e);
            return false;
        }
    }

    /** Small integers: their float32 sum in any order is the float64 one. */
    private static float value(int rank, int round, int k, int i) {
        return (rank + 1) * 16 + Math.floorMod(round, 97) * 4 + k + i % 3;
    }

    private void counted(Runnable body) {
        try {
            body.run();
        } catch (RuntimeException e) {
            refused(e);
        }
    }

    /** A refusal names what is wrong; a programming error (a null, a bad index or cast) is a defect whatever it says. */
    private void refused(RuntimeException e) {
        boolean bug = e instanceof NullPointerException || e instanceof ClassCastException
                || e instanceof IndexOutOfBoundsException || e instanceof ArithmeticException;
        if (bug || e.getMessage() == null || e.getMessage().isBlank()) {
            defect("not a clean refusal: " + e);
        } else {
            refusals.incrementAndGet();
        }
    }

    private void defect(String what) {
        defects.incrementAndGet();
        report("DEFECT " + what);
    }

    private synchronized void report(String line) {
        reports.add(line);
    }

    private synchronized List<String> reports() {
        return List.copyOf(reports);
    }

    /**
     * Runs body(0) on thread faults-A and body(1) on faults-B at once, and waits for both; what a body
     * throws is counted (a refusal, or a defect) rather than lost with its thread.
     */
    private void runOnBoth(java.util.function.IntConsumer body) throws InterruptedException {
        Thread a = new Thread(() -> counted(() -> body.accept(0)), "faults-A");
        Thread b = new Thread(() -> counted(() -> body.accept(1)), "faults-B");
        a.start();
        b.start();
        a.join(WATCHDOG.toMillis());
        b.join(WATCHDOG.toMillis());
    }
}
