package io.symmem.cli;

import io.symmem.cli.common.HalfFloats;
import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeStream;
import io.symmem.nccl.Nccl;
import io.symmem.nccl.NcclBuffer;
import io.symmem.nccl.NcclCommunicator;
import io.symmem.nccl.NcclDataType;
import io.symmem.nccl.NcclRedOp;
import io.symmem.service.RankRuntime;
import jakarta.inject.Inject;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The GPU proof of the NCCL API (scripts/gpu/run-nccl.sh), one process per rank:
 * {@code info} (which NCCL was found, its version), {@code correctness} (every collective x dtype x
 * op x odd size against a float64 reference, through a communicator bootstrapped through the store),
 * {@code abort} (world 1 only: a world-2 init whose rank 1 never comes ends at its deadline, then a
 * new communicator works; the same cut short by NativeCore.abort), {@code hang} (world 2: rank 1
 * skips a collective, rank 0's synchronize ends at the deadline with the communicator aborted, then
 * both make a new one), {@code bench} (allReduce latency per size). Prints PASS/FAIL lines.
 */
@Command(name = "nccl-check", hidden = true, description = "GPU checks of the NCCL API: info, correctness, abort, hang, bench.")
public class NcclCheckCommand implements Callable<Integer> {
    @Inject
    RankRuntime runtime;

    @Parameters(index = "0", description = "info, correctness, abort, hang or bench")
    String mode;

    @Option(names = "--sizes", split = ",", defaultValue = "1,7,4099,1000003", description = "Element counts (correctness).")
    List<Long> sizes;

    @Option(names = "--bench-bytes", split = ",", defaultValue = "4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456")
    List<Long> benchBytes;

    @Option(names = "--deadline-ms", defaultValue = "5000", description = "Deadline of the abort/hang cases.")
    int deadlineMs;

    private int rank;
    private int world;
    private int failures;

    @Override
    public Integer call() {
        try {
            if (mode.equals("info")) {
                System.out.println("nccl " + Nccl.load() + " from " + Nccl.libraryPath() + ", " + Nccl.runtimeConnect());
                return 0;
            }
            runtime.start();
            runtime.awaitReady(runtime.config().timeout().rendezvous().plusSeconds(30));
            rank = runtime.config().rank();
            world = runtime.config().worldSize();
            NativeBackend backend = runtime.backend();
            if (!backend.isDevice()) {
                System.err.println("nccl-check: needs SYMMEM_BACKEND=cuda (got " + backend.name() + ")");
                return 2;
            }
            System.out.printf("[%d] nccl %s from %s, device %d of %d, %s%n", rank, Nccl.load(), Nccl.libraryPath(),
                    backend.device(), backend.deviceCount(), Nccl.runtimeConnect());
            switch (mode) {
                case "correctness" -> correctness(backend);
                case "abort" -> abortCases(backend);
                case "hang" -> hang(backend);
                case "bench" -> bench(backend);
                default -> {
                    System.err.println("nccl-check: unknown mode " + mode);
                    return 2;
                }
            }
        } catch (RuntimeException e) {
            System.out.printf("[%d] FAIL %s: %s%n", rank, e.getClass().getSimpleName(), e.getMessage());
            return 1;
        }
        System.out.printf("[%d] %s %s%n", rank, failures == 0 ? "PASS" : "FAIL (" + failures + " cases)", mode);
        return failures == 0 ? 0 : 1;
    }

    private NcclCommunicator communicator(String group, NativeBackend backend) {
        return NcclCommunicator.create(runtime.exchange(group, rank, world), backend.device(),
                runtime.config().timeout().rendezvous(), runtime.config().timeout().collective());
    }

    // ---- correctness ----------------------------------------------------------------------------

    /** Rank r's element i: small integers (and halves for floats) so every dtype holds them exactly. */
    private static double value(int r, long i, NcclDataType t, NcclRedOp op) {
        long k = (i * 7 + r * 13L) % 11;
        if (op == NcclRedOp.PROD) {
            return t == NcclDataType.UINT8 ? 1 + k % 3 : new double[] {-1, 1, 2}[(int) (k % 3)];  // no overflow at world <= 8
        }
        double v = t == NcclDataType.UINT8 ? k : k - 5;
        return t.isFloatingPoint() ? v + 0.5 * (i % 2) : v;
    }

    private static double reduce(double[] xs, NcclRedOp op, NcclDataType t) {
        double acc = xs[0];
        for (int j = 1; j < xs.length; j++) {
            acc = switch (op) {
                case SUM, AVG -> acc + xs[j];
                case PROD -> acc * xs[j];
                case MAX -> Math.max(acc, xs[j]);
                case MIN -> Math.min(acc, xs[j]);
            };
        }
        if (op == NcclRedOp.AVG) {
            acc = t.isFloatingPoint() ? acc / xs.length : (long) (acc / xs.length);  // NCCL: integer division
        }
        return wrap(acc, t);
    }

    /** Integer results wrap as the type does. */
    private static double wrap(double v, NcclDataType t) {
        return switch (t) {
            case INT8 -> (byte) (long) v;
            case UINT8 -> ((long) v) & 0xff;
            case INT32 -> (int) (long) v;
            default -> v;
        };
    }

    private static void put(ByteBuffer b, NcclDataType t, double v) {
        switch (t) {
            case INT8, UINT8 -> b.put((byte) (long) v);
            case INT32 -> b.putInt((int) v);
            case INT64 -> b.putLong((long) v);
            case FLOAT16 -> b.putShort(HalfFloats.toFp16((float) v));
            case BFLOAT16 -> b.putShort(HalfFloats.toBf16((float) v));
            case FLOAT32 -> b.putFloat((float) v);
            case FLOAT64 -> b.putDouble(v);
        }
    }

    private static double get(ByteBuffer b, NcclDataType t) {
        return switch (t) {
            case INT8 -> b.get();
            case UINT8 -> b.get() & 0xff;
            case INT32 -> b.getInt();
            case INT64 -> b.getLong();
            case FLOAT16 -> HalfFloats.fromFp16(b.getShort());
            case BFLOAT16 -> HalfFloats.fromBf16(b.getShort());
            case FLOAT32 -> b.getFloat();
            case FLOAT64 -> b.getDouble();
        };
    }

    private void correctness(NativeBackend backend) {
        long maxCount = sizes.stream().mapToLong(Long::longValue).max().orElse(1);
        long recvOffset = 256;  // results land at an offset: the (owner, offset) path is exercised
        long bytes = maxCount * 8 * world + recvOffset;
        try (NcclCommunicator comm = communicator("nccl-correctness", backend); NativeStream stream = backend.createStream();
                LocalBuffer sendMem = backend.allocateLocal(bytes); LocalBuffer recvMem = backend.allocateLocal(bytes)) {
            NcclBuffer send = NcclBuffer.of(sendMem);
            NcclBuffer recv = NcclBuffer.of(recvMem, recvOffset);
            int root = world - 1;
            int cases = 0;
            long t0 = System.nanoTime();
            for (String coll : List.of("allReduce", "reduce", "reduceScatter", "broadcast", "allGather")) {
                List<NcclRedOp> ops = coll.equals("broadcast") || coll.equals("allGather") ? List.of(NcclRedOp.SUM)
                        : List.of(NcclRedOp.values());
                for (NcclDataType t : NcclDataType.values()) {
                    for (NcclRedOp op : ops) {
                        for (long count : sizes) {
                            cases++;
                            check(comm, stream, sendMem, send, recvMem, recv, recvOffset, coll, t, op, count, root);
                        }
                    }
                }
            }
            System.out.printf("[%d] correctness: %d cases (5 collectives x 8 dtypes x ops x sizes %s), %d failed, %.1f s%n",
                    rank, cases, sizes, failures, (System.nanoTime() - t0) / 1e9);
        }
    }

    private void check(NcclCommunicator comm, NativeStream stream, LocalBuffer sendMem, NcclBuffer send, LocalBuffer recvMem,
            NcclBuffer recv, long recvOffset, String coll, NcclDataType t, NcclRedOp op, long count, int root) {
        int n = (int) count;
        int inBlocks = coll.equals("reduceScatter") ? world : 1;
        int outBlocks = coll.equals("allGather") ? world : 1;
        ByteBuffer in = ByteBuffer.allocate(n * inBlocks * t.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < (long) n * inBlocks; i++) {
            put(in, t, value(rank, i, t, op));
        }
        in.flip();
        sendMem.copyFrom(in, 0);
        switch (coll) {
            case "allReduce" -> comm.allReduce(send, recv, count, t, op, stream);
            case "reduce" -> comm.reduce(send, recv, count, t, op, root, stream);
            case "reduceScatter" -> comm.reduceScatter(send, recv, count, t, op, stream);
            case "broadcast" -> comm.broadcast(send, recv, count, t, root, stream);
            case "allGather" -> comm.allGather(send, recv, count, t, stream);
            default -> throw new IllegalStateException(coll);
        }
        comm.synchronize(stream);
        if (coll.equals("reduce") && rank != root) {
            return;
        }
        ByteBuffer out = ByteBuffer.allocate(n * outBlocks * t.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        recvMem.copyTo(out, recvOffset);
        out.flip();
        double[] xs = new double[world];
        for (long j = 0; j < (long) n * outBlocks; j++) {
            double expected;
            switch (coll) {
                case "broadcast" -> expected = value(root, j, t, op);
                case "allGather" -> expected = value((int) (j / n), j % n, t, op);
                default -> {
                    long src = coll.equals("reduceScatter") ? rank * (long) n + j : j;
                    for (int r = 0; r < world; r++) {
                        xs[r] = value(r, src, t, op);
                    }
                    expected = reduce(xs, op, t);
                }
            }
            double got = get(out, t);
            boolean ok = got == expected;
            if (!ok && op == NcclRedOp.AVG && !t.isFloatingPoint()) {
                ok = got == wrap(Math.floor(reduceSum(xs) / world), t);  // rounding of NCCL's integer average
            }
            if (!ok) {
                failures++;
                System.out.printf("[%d] FAIL %s %s %s count %d: element %d = %s, expected %s%n", rank, coll, t.shortName(),
                        op.shortName(), count, j, got, expected);
                return;
            }
        }
    }

    private static double reduceSum(double[] xs) {
        double s = 0;
        for (double x : xs) {
            s += x;
        }
        return s;
    }

    // ---- abort ------------------------------------------------------------------------------------

    private void abortCases(NativeBackend backend) {
        if (world != 1) {
            throw new IllegalStateException("abort runs at world 1 (it makes a world-2 communicator whose rank 1 never comes)");
        }
        Duration deadline = Duration.ofMillis(deadlineMs);
        int device = backend.device();
        // 1. rank 1 never comes: non-blocking init ends at the deadline, aborted, naming what and who.
        long t0 = System.nanoTime();
        try (NcclCommunicator never = NcclCommunicator.initRank(2, Nccl.uniqueId(), 0, device, deadline)) {
            failures++;
            System.out.printf("[0] FAIL abort: a world-2 init without rank 1 succeeded (%s)%n", never);
        } catch (NativeException.Timeout e) {
            double s = (System.nanoTime() - t0) / 1e9;
            boolean named = e.getMessage().contains("rank 0 of 2") && e.getMessage().contains("within " + deadlineMs + " ms");
            System.out.printf("[0] %s init deadline: ended after %.2f s (deadline %.1f s): %s%n", named && s < deadlineMs / 1000.0 + 5
                    ? "PASS" : "FAIL", s, deadlineMs / 1000.0, e.getMessage());
            if (!named || s >= deadlineMs / 1000.0 + 5) {
                failures++;
            }
        }
        worldOneWorks(device, "after the init deadline");
        // 2. the same, cut short by NativeCore.abort (the liveness path) long before the deadline.
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            NativeCore.abort("nccl-check: rank 1 is gone");
        });
        killer.start();
        t0 = System.nanoTime();
        try (NcclCommunicator never = NcclCommunicator.initRank(2, Nccl.uniqueId(), 0, device, Duration.ofSeconds(60))) {
            failures++;
            System.out.printf("[0] FAIL abort: a world-2 init without rank 1 succeeded (%s)%n", never);
        } catch (NativeException.Aborted e) {
            double s = (System.nanoTime() - t0) / 1e9;
            boolean ok = s < 10 && e.getMessage().contains("rank 1 is gone");
            System.out.printf("[0] %s NativeCore.abort ends a waiting init: after %.2f s: %s%n", ok ? "PASS" : "FAIL", s, e.getMessage());
            if (!ok) {
                failures++;
            }
        } finally {
            try {
                killer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            NativeCore.resetAbort();
        }
        worldOneWorks(device, "after NativeCore.abort and reset");
    }

    private void worldOneWorks(int device, String when) {
        try (NcclCommunicator one = NcclCommunicator.initRank(1, Nccl.uniqueId(), 0, device, Duration.ofSeconds(30));
                NativeBackend b = new NativeBackend("cuda", device); LocalBuffer mem = b.allocateLocal(4096);
                NativeStream s = b.createStream()) {
            float[] x = new float[1024];
            for (int i = 0; i < x.length; i++) {
                x[i] = i;
            }
            mem.copyFrom(x, 0);
            one.allReduce(NcclBuffer.of(mem), NcclBuffer.of(mem), 1024, NcclDataType.FLOAT32, NcclRedOp.SUM, s);
            one.synchronize(s);
            float[] y = new float[1024];
            mem.copyTo(y, 0);
            boolean ok = java.util.Arrays.equals(x, y);
            System.out.printf("[0] %s a new world-1 communicator works %s%n", ok ? "PASS" : "FAIL", when);
            if (!ok) {
                failures++;
            }
        }
    }

    // ---- hang (world 2) -----------------------------------------------------------------------------

    private void hang(NativeBackend backend) {
        if (world < 2) {
            throw new IllegalStateException("hang needs world >= 2");
        }
        Duration deadline = Duration.ofMillis(deadlineMs);
        var exchange = runtime.exchange("nccl-hang-sync", rank, world);
        try (NativeStream stream = backend.createStream(); LocalBuffer mem = backend.allocateLocal(1 << 20)) {
            NcclCommunicator comm = NcclCommunicator.create(runtime.exchange("nccl-hang", rank, world), backend.device(),
                    runtime.config().timeout().rendezvous(), deadline);
            if (rank == 0) {
                long t0 = System.nanoTime();
                try {
                    comm.allReduce(NcclBuffer.of(mem), NcclBuffer.of(mem), 1000, NcclDataType.BFLOAT16, NcclRedOp.SUM, stream);
                    // Where the wait is: NCCL connected everything at init, so the call enqueues at once.
                    System.out.printf("[0] allReduce returned after %.3f s; synchronize waits%n", (System.nanoTime() - t0) / 1e9);
                    comm.synchronize(stream);
                    failures++;
                    System.out.println("[0] FAIL hang: an allReduce that rank 1 skipped completed");
                } catch (NativeException.Timeout e) {
                    double s = (System.nanoTime() - t0) / 1e9;
                    boolean ok = e.getMessage().contains("allReduce(bf16 sum, 1000 elements)") && e.getMessage().contains("rank 0 of "
                            + world) && e.getMessage().contains("aborted") && comm.isAborted();
                    System.out.printf("[0] %s collective deadline: after %.2f s: %s%n", ok ? "PASS" : "FAIL", s, e.getMessage());
                    if (!ok) {
                        failures++;
                    }
                }
            }
            // Rank 1 enqueued nothing; it waits for rank 0's verdict, then aborts its side too.
            exchange.barrier(Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(70));
            if (rank != 0) {
                comm.abort("rank 0 gave up on this communicator");
            }
            comm.close();
            try (NcclCommunicator fresh = communicator("nccl-hang-2", backend)) {
                float[] x = new float[256];
                java.util.Arrays.fill(x, rank + 1);
                mem.copyFrom(x, 0);
                fresh.allReduce(NcclBuffer.of(mem), NcclBuffer.of(mem), 256, NcclDataType.FLOAT32, NcclRedOp.SUM, stream);
                fresh.synchronize(stream);
                mem.copyTo(x, 0);
                boolean ok = x[0] == world * (world + 1) / 2f && x[255] == x[0];
                System.out.printf("[%d] %s a new communicator works after the abort%n", rank, ok ? "PASS" : "FAIL");
                if (!ok) {
                    failures++;
                }
            }
        }
    }

    // ---- bench --------------------------------------------------------------------------------------

    private void bench(NativeBackend backend) {
        long max = benchBytes.stream().mapToLong(Long::longValue).max().orElse(4096);
        List<String> rows = new ArrayList<>();
        var sync = runtime.exchange("nccl-bench-sync", rank, world);  // the ranks start each timing together
        try (NcclCommunicator comm = communicator("nccl-bench", backend); NativeStream stream = backend.createStream();
                LocalBuffer send = backend.allocateLocal(max); LocalBuffer recv = backend.allocateLocal(max)) {
            for (boolean inPlace : new boolean[] {false, true}) {
                // In place is what torch.cuda.nccl.all_reduce([x]) does; out of place adds a copy at world 1.
                String label = inPlace ? "JAVA-NCCL-IP" : "JAVA-NCCL";
                for (long bytes : benchBytes) {
                    long count = bytes / 2;
                    NcclBuffer out = inPlace ? NcclBuffer.of(send) : NcclBuffer.of(recv);
                    Runnable once = () -> comm.allReduce(NcclBuffer.of(send), out, count, NcclDataType.BFLOAT16,
                            NcclRedOp.SUM, stream);
                    for (int i = 0; i < 5; i++) {
                        once.run();
                    }
                    comm.synchronize(stream);
                    int iters = 10;
                    double us;
                    for (;;) {
                        sync.barrier(Duration.ofSeconds(60)).await().atMost(Duration.ofSeconds(70));
                        long t0 = System.nanoTime();
                        for (int i = 0; i < iters; i++) {
                            once.run();
                        }
                        comm.synchronize(stream);
                        long ns = System.nanoTime() - t0;
                        us = ns / 1e3 / iters;
                        if (ns > 100_000_000L || iters >= 20000) {
                            break;
                        }
                        iters *= 4;
                    }
                    rows.add(String.format(Locale.ROOT, "%s %d %.2f %d", label, bytes, us, iters));
                }
            }
        }
        if (rank == 0) {
            System.out.println("symmem-nccl allReduce bf16 sum, world " + world + " (series bytes us_per_op iters; -IP = in place):");
            rows.forEach(System.out::println);
        }
    }
}
