package io.symmem.nccl;

import io.quarkus.runtime.configuration.DurationConverter;
import io.symmem.config.ConfigVariable;
import io.symmem.nativ.DeviceMemory;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeNccl;
import io.symmem.nativ.NativeStream;
import io.symmem.store.StoreExchange;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One rank's NCCL communicator (torch.cuda.nccl.init_rank's capsule, with deadlines). It is a
 * NON-BLOCKING NCCL communicator: creation waits at most its deadline (a rank that never comes ends
 * it with an error naming the communicator, the rank and the deadline, and the communicator is
 * aborted); collectives ENQUEUE on a stream and return, {@link #synchronize} waits for them up to the
 * collective timeout and aborts the communicator when they do not complete. {@code
 * NativeCore.abort} (the liveness path) aborts every communicator of the process. An aborted
 * communicator refuses further work; close it and create a new one.
 *
 * <p>Buffers are {@link NcclBuffer}s (a memory owner and a byte offset): device memory of a cuda
 * backend on this communicator's device. Every argument is checked here, before any native call,
 * and a bad one is an {@link IllegalArgumentException} naming it. Calls on one communicator are
 * serialised. A call leaves its thread's current CUDA device at this communicator's device (set only
 * where it differs, never restored: a thread working on one GPU switches once; docs/nccl.md).
 */
public final class NcclCommunicator implements AutoCloseable {
    /** SYMMEM_TIMEOUT_COLLECTIVE's default, used when the variable is unset. */
    static final Duration DEFAULT_COLLECTIVE_TIMEOUT = Duration.ofSeconds(60);

    private final NativeNccl.Comm comm;
    private final int nranks;
    private final int rank;
    private final int device;
    private final String label;
    private final Duration collectiveTimeout;
    /** collectiveTimeout in ms, as every native call takes it: converted once, not per call. */
    private final int collectiveTimeoutMs;
    private boolean closed;

    private NcclCommunicator(NativeNccl.Comm comm, int nranks, int rank, int device, String label,
            Duration collectiveTimeout) {
        this.comm = comm;
        this.nranks = nranks;
        this.rank = rank;
        this.device = device;
        this.label = label;
        this.collectiveTimeout = collectiveTimeout;
        this.collectiveTimeoutMs = millis("collectiveTimeout", collectiveTimeout);
    }

    /**
     * ncclCommInitRank on {@code device}, waited for up to {@code deadline}; collectives then wait up
     * to SYMMEM_TIMEOUT_COLLECTIVE (default 60s). Loads NCCL if needed.
     */
    public static NcclCommunicator initRank(int nranks, byte[] uniqueId, int rank, int device, Duration deadline) {
        return initRank(nranks, uniqueId, rank, device, deadline, defaultCollectiveTimeout());
    }

    public static NcclCommunicator initRank(int nranks, byte[] uniqueId, int rank, int device, Duration deadline,
            Duration collectiveTimeout) {
        if (device < 0) {
            throw new IllegalArgumentException("device must be >= 0, got " + device);
        }
        return init(nranks, uniqueId, rank, device, null, deadline, collectiveTimeout);
    }

    /**
     * A communicator of the ranks of {@code group}: rank 0 makes the unique id and every rank
     * contributes to one all-gather through the store (so a rank that does not come is named by the
     * store's timeout: "ranks [1] did not arrive"), then all init their rank. {@code deadline} bounds
     * the whole (store round and NCCL init); collectives wait up to SYMMEM_TIMEOUT_COLLECTIVE.
     */
    public static NcclCommunicator create(StoreExchange group, int device, Duration deadline) {
        return create(group, device, deadline, defaultCollectiveTimeout());
    }

    public static NcclCommunicator create(StoreExchange group, int device, Duration deadline, Duration collectiveTimeout) {
        Objects.requireNonNull(group, "group must not be null");
        if (device < 0) {
            throw new IllegalArgumentException("device must be >= 0, got " + device);
        }
        millis("deadline", deadline);
        millis("collectiveTimeout", collectiveTimeout);
        Instant end = Instant.now().plus(deadline);
        byte[] mine = group.rank() == 0 ? Nccl.uniqueId() : new byte[0];
        List<byte[]> all = group.allGather(mine, deadline).await().atMost(deadline.plusSeconds(5));
        byte[] uid = all.get(0);
        if (uid.length != NativeNccl.UNIQUE_ID_BYTES) {
            throw new IllegalStateException("group '" + group.groupName() + "': rank 0 published a unique id of "
                    + uid.length + " bytes, expected " + NativeNccl.UNIQUE_ID_BYTES + " (is rank 0 running another program?)");
        }
        Duration left = Duration.between(Instant.now(), end);
        if (left.toMillis() < 1) {
            left = Duration.ofMillis(1);
        }
        return init(group.worldSize(), uid, group.rank(), device, "group '" + group.groupName() + "'", left,
                collectiveTimeout);
    }

    /** device -1: the calling thread's current device (tests with a fake NCCL, no GPU). */
    static NcclCommunicator init(int nranks, byte[] uniqueId, int rank, int device, String label, Duration deadline,
            Duration collectiveTimeout) {
        if (nranks < 1) {
            throw new IllegalArgumentException("nranks must be >= 1, got " + nranks);
        }
        if (rank < 0 || rank >= nranks) {
            throw new IllegalArgumentException("rank must be in 0.." + (nranks - 1) + ", got " + rank);
        }
        Objects.requireNonNull(uniqueId, "uniqueId must not be null");
        if (uniqueId.length != NativeNccl.UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("uniqueId must be " + NativeNccl.UNIQUE_ID_BYTES + " bytes, got " + uniqueId.length);
        }
        int timeoutMs = millis("deadline", deadline);
        millis("collectiveTimeout", collectiveTimeout);
        Nccl.load();
        String name = label != null ? label : "communicator of " + nranks + (nranks == 1 ? " rank" : " ranks");
        NativeNccl.Comm comm = NativeNccl.initRank(nranks, uniqueId, rank, device, name, timeoutMs);
        return new NcclCommunicator(comm, nranks, rank, device, name, collectiveTimeout);
    }

    public int size() {
        return nranks;
    }

    public int rank() {
        return rank;
    }

    public int device() {
        return device;
    }

    /** "group 'world'" or "communicator of 4 ranks": how errors name it. */
    public String label() {
        return label;
    }

    public Duration collectiveTimeout() {
        return collectiveTimeout;
    }

    /** True once aborted (deadline, NCCL error, {@link #abort}, or NativeCore.abort). */
    public synchronized boolean isAborted() {
        return !closed && comm.aborted();
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    // ---- collectives: enqueue on `stream` (null = the legacy default stream) -------------------

    /** recv[i] = op over ranks of send[i], for i < count. send and recv may be the same memory. */
    public synchronized void allReduce(NcclBuffer send, NcclBuffer recv, long count, NcclDataType dtype, NcclRedOp op,
            NativeStream stream) {
        String what = "allReduce";
        checkCommon(what, count, dtype, op, stream);
        region(what, "send", send, count, dtype, 1);
        region(what, "recv", recv, count, dtype, 1);
        comm.allReduce(send.memory(), send.offsetBytes(), recv.memory(), recv.offsetBytes(), count, dtype.code(),
                op.code(), stream, timeoutMs());
    }

    /**
     * A measurement aid: {@code times} calls of {@link #allReduce} with these arguments, enqueued back to back by one
     * native call that loops in C, as an application's own C loop calls NCCL. Timed beside {@link #allReduce} in the
     * same process and on the same buffers, it tells what a call from Java adds from what the process itself does to
     * NCCL ({@code symmem bench allreduce --nccl}, its -c columns). Checks, deadline and abort as for one call.
     */
    public synchronized void allReduceRepeated(NcclBuffer send, NcclBuffer recv, long count, NcclDataType dtype,
            NcclRedOp op, NativeStream stream, int times) {
        String what = "allReduce repeated";
        if (times < 1) {
            throw new IllegalArgumentException(what + ": times must be >= 1, got " + times);
        }
        checkCommon(what, count, dtype, op, stream);
        region(what, "send", send, count, dtype, 1);
        region(what, "recv", recv, count, dtype, 1);
        comm.allReduceRepeated(send.memory(), send.offsetBytes(), recv.memory(), recv.offsetBytes(), count, dtype.code(),
                op.code(), stream, timeoutMs(), times);
    }

    /** The reduction lands in recv on {@code root} only; recv may be null on the other ranks. */
    public synchronized void reduce(NcclBuffer send, NcclBuffer recv, long count, NcclDataType dtype, NcclRedOp op,
            int root, NativeStream stream) {
        String what = "reduce";
        checkCommon(what, count, dtype, op, stream);
        checkRoot(what, root);
        region(what, "send", send, count, dtype, 1);
        if (rank == root || recv != null) {
            region(what, "recv", recv, count, dtype, 1);
        }
        comm.reduce(send.memory(), send.offsetBytes(), recv == null ? null : recv.memory(),
                recv == null ? 0 : recv.offsetBytes(), count, dtype.code(), op.code(), root, stream, timeoutMs());
    }

    /** Root's send reaches every rank's recv; send may be null on the other ranks. */
    public synchronized void broadcast(NcclBuffer send, NcclBuffer recv, long count, NcclDataType dtype, int root,
            NativeStream stream) {
        String what = "broadcast";
        checkCommon(what, count, dtype, NcclRedOp.SUM, stream);
        checkRoot(what, root);
        if (rank == root || send != null) {
            region(what, "send", send, count, dtype, 1);
        }
        region(what, "recv", recv, count, dtype, 1);
        comm.broadcast(send == null ? null : send.memory(), send == null ? 0 : send.offsetBytes(), recv.memory(),
                recv.offsetBytes(), count, dtype.code(), root, stream, timeoutMs());
    }

    /** recv (size() x sendCount elements) gets rank r's send at [r*sendCount, (r+1)*sendCount). */
    public synchronized void allGather(NcclBuffer send, NcclBuffer recv, long sendCount, NcclDataType dtype,
            NativeStream stream) {
        String what = "allGather";
        checkCommon(what, sendCount, dtype, NcclRedOp.SUM, stream);
        region(what, "send", send, sendCount, dtype, 1);
        region(what, "recv", recv, sendCount, dtype, nranks);
        comm.allGather(send.memory(), send.offsetBytes(), recv.memory(), recv.offsetBytes(), sendCount, dtype.code(),
                stream, timeoutMs());
    }

    /** send holds size() x recvCount elements; this rank's recv gets the reduction of block rank(). */
    public synchronized void reduceScatter(NcclBuffer send, NcclBuffer recv, long recvCount, NcclDataType dtype,
            NcclRedOp op, NativeStream stream) {
        String what = "reduceScatter";
        checkCommon(what, recvCount, dtype, op, stream);
        region(what, "send", send, recvCount, dtype, nranks);
        region(what, "recv", recv, recvCount, dtype, 1);
        comm.reduceScatter(send.memory(), send.offsetBytes(), recv.memory(), recv.offsetBytes(), recvCount, dtype.code(),
                op.code(), stream, timeoutMs());
    }

    /**
     * Waits until everything enqueued on {@code stream} so far has completed, up to the collective
     * timeout; at the deadline the communicator is aborted and the error names the last operation,
     * this communicator, the rank and the deadline. NCCL's asynchronous errors are reported here.
     */
    public synchronized void synchronize(NativeStream stream) {
        synchronize(stream, collectiveTimeout);
    }

    public synchronized void synchronize(NativeStream stream, Duration deadline) {
        requireOpen("synchronize");
        checkStream("synchronize", stream);
        comm.synchronize(stream, millis("deadline", deadline));
    }

    // ---- windows ----------------------------------------------------------------------------------

    /**
     * Registers {@code buffer} (a symmetric buffer of a GPU backend on this communicator's device:
     * its whole allocation, signal pad and data) as an NCCL window with NCCL_WIN_COLL_SYMMETRIC, so
     * that NCCL's collectives on its data ({@code NcclBuffer.of(buffer)}) may use NCCL's symmetric
     * kernels. Collective over the communicator: every rank registers its buffer of the same size, in
     * the same order, within the collective timeout (else the communicator is aborted). NCCL 2.27+.
     *
     * @throws io.symmem.nativ.NativeException.Unsupported when NCCL gives no window (the communicator
     *     has no symmetric-memory support: the message says what NCCL needs) or is older than 2.27
     */
    public synchronized NcclWindow registerWindow(NativeBuffer buffer) {
        String what = "registerWindow";
        requireOpen(what);
        if (buffer == null) {
            throw new IllegalArgumentException(what + ": buffer must not be null");
        }
        if (buffer.isClosed()) {
            throw new IllegalArgumentException(what + ": buffer is freed");
        }
        if (!buffer.isDevice()) {
            throw new IllegalArgumentException(what + ": buffer is memory of the " + buffer.backend().name()
                    + " backend; an NCCL window needs GPU memory (cuda, nccl or nvshmem backend)");
        }
        if (device >= 0 && buffer.backend().device() != device) {
            throw new IllegalArgumentException(what + ": buffer is on device " + buffer.backend().device()
                    + ", the communicator on device " + device);
        }
        return new NcclWindow(this, comm.registerWindow(buffer, true, timeoutMs()), buffer);
    }

    /** Deregisters one of this communicator's windows (NcclWindow.close). */
    synchronized void deregister(NativeNccl.Window window) {
        // Also after close: destroying the communicator released the window in NCCL, and this only
        // frees the record.
        window.deregister(timeoutMs());
    }

    /** ncclCommAbort now (or, when another thread is waiting on it, at that wait's next turn). */
    public void abort(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("reason must be a non-empty text");
        }
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        // Not under this object's lock: a thread waiting in synchronize() holds it.
        comm.abort(reason);
    }

    /**
     * Finalizes and destroys the communicator, waiting up to the collective timeout; when that does
     * not end (unfinished work, a peer that does not close) it aborts instead and throws the timeout
     * after freeing everything. An aborted communicator is just freed. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        comm.destroy(timeoutMs());
    }

    @Override
    public String toString() {
        return label + " (rank " + rank + " of " + nranks + ", device " + device + ")";
    }

    // ---- argument checks: before any native call ---------------------------------------------

    private int timeoutMs() {
        return collectiveTimeoutMs;
    }

    private void requireOpen(String what) {
        if (closed) {
            throw new IllegalStateException(what + " on " + this + ": the communicator is closed");
        }
    }

    private void checkCommon(String what, long count, NcclDataType dtype, NcclRedOp op, NativeStream stream) {
        requireOpen(what);
        if (dtype == null) {
            throw new IllegalArgumentException(what + ": dtype must not be null");
        }
        if (op == null) {
            throw new IllegalArgumentException(what + ": op must not be null");
        }
        if (count < 0) {
            throw new IllegalArgumentException(what + ": count must be >= 0, got " + count);
        }
        checkStream(what, stream);
    }

    private void checkRoot(String what, int root) {
        if (root < 0 || root >= nranks) {
            throw new IllegalArgumentException(what + ": root must be in 0.." + (nranks - 1) + " (" + label + "), got " + root);
        }
    }

    private void checkStream(String what, NativeStream stream) {
        if (stream == null) {
            return;
        }
        if (!stream.backend().isDevice()) {
            throw new IllegalArgumentException(what + ": stream belongs to the " + stream.backend().name()
                    + " backend; NCCL needs a stream of a cuda backend");
        }
        if (device >= 0 && stream.backend().device() != device) {
            throw new IllegalArgumentException(what + ": stream is on device " + stream.backend().device()
                    + ", the communicator on device " + device);
        }
    }

    private void region(String what, String name, NcclBuffer buffer, long count, NcclDataType dtype, int multiplier) {
        if (buffer == null) {
            throw new IllegalArgumentException(what + ": " + name + " must not be null");
        }
        DeviceMemory memory = buffer.memory();
        if (memory.isClosed()) {
            throw new IllegalArgumentException(what + ": " + name + " is freed");
        }
        if (!memory.isDevice()) {
            throw new IllegalArgumentException(what + ": " + name + " is memory of the " + memory.backend().name()
                    + " backend; NCCL needs GPU memory (cuda, nccl or nvshmem backend)");
        }
        if (device >= 0 && memory.backend().device() != device) {
            throw new IllegalArgumentException(what + ": " + name + " is on device " + memory.backend().device()
                    + ", the communicator on device " + device);
        }
        checkBytes(what, name, memory.size(), buffer.offsetBytes(), count, dtype, multiplier);
    }

    /** offset + count x multiplier x dtype bytes must fit in size (no overflow). */
    static void checkBytes(String what, String name, long size, long offset, long count, NcclDataType dtype,
            int multiplier) {
        long need;
        try {
            need = Math.addExact(offset, Math.multiplyExact(Math.multiplyExact(count, (long) multiplier), dtype.bytes()));
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(what + ": " + name + ": " + count + " x " + multiplier + " " + dtype.shortName()
                    + " elements at offset " + offset + " overflow a 64-bit byte count");
        }
        if (need > size) {
            String elements = multiplier == 1 ? count + " " + dtype.shortName() + " elements"
                    : multiplier + " x " + count + " " + dtype.shortName() + " elements";
            throw new IllegalArgumentException(what + ": " + name + " is too small: " + elements + " at offset " + offset
                    + " need " + need + " bytes, it has " + size);
        }
    }

    static int millis(String name, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        long ms = d.toMillis();
        if (d.isNegative() || d.isZero() || ms < 1 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + " must be between 1 ms and 24 days, got " + d);
        }
        return (int) ms;
    }

    /** SYMMEM_TIMEOUT_COLLECTIVE, read the way the configuration reads it; 60s when unset. */
    static Duration defaultCollectiveTimeout() {
        String value = System.getenv(ConfigVariable.SYMMEM_TIMEOUT_COLLECTIVE.name());
        if (value == null) {
            return DEFAULT_COLLECTIVE_TIMEOUT;
        }
        ConfigVariable.SYMMEM_TIMEOUT_COLLECTIVE.problem(value).ifPresent(p -> {
            throw new IllegalArgumentException(p);
        });
        return new DurationConverter().convert(value.trim());
    }

}
