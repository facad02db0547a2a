package io.symmem;

import io.symmem.collective.DType;
import io.symmem.memory.SignalCompare;
import io.symmem.memory.SignalOp;
import io.symmem.memory.SymmetricMemory;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A typed symmetric buffer: {@link #count()} elements of {@link #dtype()} on every rank of its group,
 * each rank able to reach every peer's. Made by {@link SymmemGroup#allocate} or {@link BufferPool#allocate};
 * the group's collectives work on it in place. Elements go in and come out by index, on every backend
 * (GPU memory included): float32 as {@code float[]}, bf16 and fp16 as their raw 16-bit patterns in
 * {@code short[]}, any type as bytes in native order.
 *
 * <pre>{@code
 * try (SymmetricBuffer b = group.allocate(DType.FLOAT32, 4)) {
 *     b.write(new float[] {1, 2, 3, 4});
 *     group.allReduce(b, ReduceOp.SUM, Algorithm.ONE_SHOT);
 *     float[] sum = new float[4];
 *     b.read(sum);
 * }
 * }</pre>
 *
 * Closing frees this rank's part; on the nvshmem backend freeing is collective (every rank closes
 * its buffers in the same order).
 */
public final class SymmetricBuffer implements AutoCloseable {
    private final SymmemGroup group;
    private final SymmetricMemory memory;
    private final DType dtype;
    private final long count;
    private final Consumer<SymmetricBuffer> onClose;
    private final IssueLane lane;
    private final boolean ownsLane;
    private final BufferUse use;
    private volatile boolean closed;

    /** A buffer of its own: its collectives go on a lane (stream) of its own. */
    SymmetricBuffer(SymmemGroup group, SymmetricMemory memory, DType dtype, long count, Consumer<SymmetricBuffer> onClose) {
        this(group, memory, dtype, count, onClose,
                new IssueLane("the " + dtype.shortName() + " buffer of " + count + " elements", memory, false), true);
    }

    /** A block of a pool: its collectives go on the pool's lane. */
    SymmetricBuffer(SymmemGroup group, SymmetricMemory memory, DType dtype, long count, Consumer<SymmetricBuffer> onClose,
            IssueLane lane, boolean ownsLane) {
        this.group = group;
        this.memory = memory;
        this.dtype = dtype;
        this.count = count;
        this.onClose = onClose;
        this.lane = lane;
        this.ownsLane = ownsLane;
        this.use = new BufferUse(group.name(), "the " + dtype.shortName() + " buffer of " + count + " elements");
    }

    /**
     * Runs {@code call} as {@code operation} inside this buffer: refused at once while another thread is
     * inside, and the buffer is not freed until it returns.
     */
    void use(String operation, Runnable call) {
        use.run(operation, call);
    }

    /** The operation inside this buffer now (a collective, a read, a write), or null. */
    String operationInside() {
        return use.operationInside();
    }

    /** Where this buffer's collectives are issued. */
    IssueLane lane() {
        checkOpen();
        return lane;
    }

    /** Bytes of {@code count} elements of {@code dtype}, refusing a count that is not positive or too large. */
    static long bytesOf(String group, DType dtype, long count) {
        if (count <= 0) {
            throw new IllegalArgumentException("a symmetric buffer of group '" + group + "' needs a positive element count, got "
                    + count);
        }
        if (count > Long.MAX_VALUE / dtype.bytes()) {
            throw new IllegalArgumentException("a symmetric buffer of " + count + " " + dtype.shortName()
                    + " elements is larger than any memory");
        }
        return count * dtype.bytes();
    }

    public SymmemGroup group() {
        return group;
    }

    public DType dtype() {
        return dtype;
    }

    /** Elements on each rank. */
    public long count() {
        return count;
    }

    public long sizeBytes() {
        return count * dtype.bytes();
    }

    /** True when the buffer is GPU memory (cuda, nvshmem and nccl backends). */
    public boolean isDevice() {
        return memory.isDevice();
    }

    /** Writes {@code values} at element 0 of this rank's buffer (float32 buffers). */
    public void write(float[] values) {
        write(0, values);
    }

    /** Writes {@code values} from element {@code index} of this rank's buffer (float32 buffers). */
    public void write(long index, float[] values) {
        check(DType.FLOAT32, "float[]", index, values.length);
        use.run("write", () -> memory.copyFrom(values, index * Float.BYTES));
    }

    /** Reads this rank's buffer from element 0 into {@code values} (float32 buffers). */
    public void read(float[] values) {
        read(0, values);
    }

    /** Reads this rank's buffer from element {@code index} into {@code values} (float32 buffers). */
    public void read(long index, float[] values) {
        check(DType.FLOAT32, "float[]", index, values.length);
        use.run("read", () -> memory.copyTo(values, index * Float.BYTES));
    }

    /** Writes raw 16-bit values at element 0 (bf16 and fp16 buffers). */
    public void write(short[] values) {
        write(0, values);
    }

    /** Writes raw 16-bit values from element {@code index} (bf16 and fp16 buffers). */
    public void write(long index, short[] values) {
        check(null, "short[]", index, values.length);
        use.run("write", () -> memory.copyFrom(values, index * Short.BYTES));
    }

    /** Reads raw 16-bit values from element 0 (bf16 and fp16 buffers). */
    public void read(short[] values) {
        read(0, values);
    }

    /** Reads raw 16-bit values from element {@code index} (bf16 and fp16 buffers). */
    public void read(long index, short[] values) {
        check(null, "short[]", index, values.length);
        use.run("read", () -> memory.copyTo(values, index * Short.BYTES));
    }

    /** Copies {@code src}'s remaining bytes (native order) to element {@code index}; src's position advances. */
    public void write(long index, ByteBuffer src) {
        checkBytes(index, src.remaining());
        use.run("write", () -> memory.copyFrom(src, index * dtype.bytes()));
    }

    /** Fills {@code dst}'s remaining bytes from element {@code index}; dst's position advances. */
    public void read(long index, ByteBuffer dst) {
        checkBytes(index, dst.remaining());
        use.run("read", () -> memory.copyTo(dst, index * dtype.bytes()));
    }

    // ---- one-sided access to a peer's buffer (not collective) -----------------------------------
    // A put or get reaches rank `peer` of the group (0..size()-1) directly, with no call on that rank.
    // Order it for the peer with putWithSignal and waitSignal, or with a barrier: the peer reads what
    // a put wrote only after it has seen the signal that followed the put.

    /** Writes {@code values} into rank {@code peer}'s buffer from element {@code index} (float32 buffers). */
    public void put(int peer, long index, float[] values) {
        check(DType.FLOAT32, "float[]", index, values.length);
        use.run("put", () -> memory.copyToPeer(peer, index * Float.BYTES, values, 0, values.length));
    }

    /** Writes raw 16-bit values into rank {@code peer}'s buffer from element {@code index} (bf16 and fp16 buffers). */
    public void put(int peer, long index, short[] values) {
        check(null, "short[]", index, values.length);
        use.run("put", () -> memory.copyToPeer(peer, index * Short.BYTES, values));
    }

    /** Copies {@code src}'s remaining bytes (native order) into rank {@code peer}'s buffer at element {@code index}. */
    public void put(int peer, long index, ByteBuffer src) {
        checkBytes(index, src.remaining());
        use.run("put", () -> memory.copyToPeer(peer, index * dtype.bytes(), src));
    }

    /** Reads rank {@code peer}'s buffer from element {@code index} into {@code values} (float32 buffers). */
    public void get(int peer, long index, float[] values) {
        check(DType.FLOAT32, "float[]", index, values.length);
        use.run("get", () -> memory.copyFromPeer(peer, index * Float.BYTES, values, 0, values.length));
    }

    /** Reads raw 16-bit values of rank {@code peer}'s buffer from element {@code index} (bf16 and fp16 buffers). */
    public void get(int peer, long index, short[] values) {
        check(null, "short[]", index, values.length);
        use.run("get", () -> memory.copyFromPeer(peer, index * Short.BYTES, values));
    }

    /** Fills {@code dst}'s remaining bytes from rank {@code peer}'s buffer at element {@code index}. */
    public void get(int peer, long index, ByteBuffer dst) {
        checkBytes(index, dst.remaining());
        use.run("get", () -> memory.copyFromPeer(peer, index * dtype.bytes(), dst));
    }

    /**
     * {@link #put(int, long, float[])}, then a signal to {@code peer} on {@code channel}: once the peer's
     * {@link #waitSignal} returns, it reads the values. A signal is consumed by one wait: a second put on
     * the same channel waits (up to SYMMEM_TIMEOUT_COLLECTIVE) until the peer has taken the first.
     */
    public void putWithSignal(int peer, long index, float[] values, int channel) {
        check(DType.FLOAT32, "float[]", index, values.length);
        use.run("putWithSignal", () -> {
            memory.copyToPeer(peer, index * Float.BYTES, values, 0, values.length);
            memory.putSignal(peer, channel, group.collectiveTimeout());
        });
    }

    /** {@link #putWithSignal(int, long, float[], int)} for bf16 and fp16 buffers (raw 16-bit values). */
    public void putWithSignal(int peer, long index, short[] values, int channel) {
        check(null, "short[]", index, values.length);
        use.run("putWithSignal", () -> {
            memory.copyToPeer(peer, index * Short.BYTES, values);
            memory.putSignal(peer, channel, group.collectiveTimeout());
        });
    }

    /**
     * Waits for {@code peer}'s signal on {@code channel} (up to SYMMEM_TIMEOUT_COLLECTIVE, naming the peer
     * when it passes) and consumes it: what the peer put before signalling is then in this rank's buffer.
     */
    public void waitSignal(int peer, int channel) {
        checkOpen();
        checkNotInGraph();
        use.run("waitSignal", () -> memory.waitSignal(peer, channel, group.collectiveTimeout()));
    }

    // ---- value signals: counters a peer adds to, waited for by value -----------------------------
    // Each rank has a 64-bit value per channel (0 to 15) on every peer's pad, 0 at first; only it
    // writes it, and a wait does not consume it. A producer that puts chunk after chunk adds 1 after
    // each; its consumer waits for "at least k" before reading chunk k, with no reply to send back.

    /** Adds {@code delta} to this rank's value on {@code peer} for {@code channel}, after everything this rank wrote before (a put). */
    public void signalAdd(int peer, int channel, long delta) {
        checkOpen();
        checkNotInGraph();
        use.run("signalAdd", () -> memory.signalValue(peer, channel, SignalOp.ADD, delta));
    }

    /** Sets this rank's value on {@code peer} for {@code channel} to {@code value}, after everything this rank wrote before. */
    public void signalSet(int peer, int channel, long value) {
        checkOpen();
        checkNotInGraph();
        use.run("signalSet", () -> memory.signalValue(peer, channel, SignalOp.SET, value));
    }

    /**
     * Waits until {@code peer}'s value for {@code channel} on this rank is {@code value} or more (unsigned; up
     * to SYMMEM_TIMEOUT_COLLECTIVE, naming the peer and the value it saw when it passes): what the peer wrote
     * before it added or set that value is then in this rank's buffer. The value stays as it is.
     */
    public void waitSignalAtLeast(int peer, int channel, long value) {
        checkOpen();
        checkNotInGraph();
        use.run("waitSignalAtLeast", () -> memory.waitSignalValue(peer, channel, SignalCompare.AT_LEAST, value,
                group.collectiveTimeout()));
    }

    /**
     * The buffer underneath, for what this class does not cover: peers' memory, signals, streams and
     * out-of-place collectives ({@code io.symmem.collective}). Owned by this buffer.
     */
    public SymmetricMemory memory() {
        checkOpen();
        return memory;
    }

    private void check(DType wanted, String javaType, long index, int length) {
        checkOpen();
        checkNotInGraph();
        boolean fits = wanted != null ? dtype == wanted : dtype.bytes() == Short.BYTES;
        if (!fits) {
            throw new IllegalArgumentException("a " + dtype.shortName() + " buffer of group '" + group.name()
                    + "' is not read or written as " + javaType + (dtype == DType.FLOAT32 ? "; use float[]" : "; use short[]"));
        }
        checkRange(index, length);
    }

    private void checkBytes(long index, int bytes) {
        checkOpen();
        checkNotInGraph();
        if (bytes % dtype.bytes() != 0) {
            throw new IllegalArgumentException(bytes + " bytes are not whole " + dtype.shortName() + " elements of "
                    + dtype.bytes() + " bytes");
        }
        checkRange(index, bytes / dtype.bytes());
    }

    private void checkRange(long index, long length) {
        if (index < 0 || index > count || length > count - index) {
            throw new IndexOutOfBoundsException("elements " + index + ".." + (index + length) + " are outside the buffer of "
                    + count + " " + dtype.shortName() + " elements of group '" + group.name() + "'");
        }
    }

    // A host copy inside a capture would run once, now, instead of at every replay.
    private void checkNotInGraph() {
        if (lane.inGraphOnThisThread()) {
            throw new IllegalStateException("reading or writing the " + dtype.shortName() + " buffer of group '"
                    + group.name() + "' inside a graph: a copy from or to Java memory is not part of a CUDA graph;"
                    + " write the input before each replay and read the result after it");
        }
    }

    private void checkOpen() {
        String lost = group.lostGeneration();
        if (lost != null) {
            throw new GenerationLostException("the " + dtype.shortName() + " buffer of group '" + group.name() + "': " + lost);
        }
        if (closed) {
            throw new IllegalStateException("the " + dtype.shortName() + " buffer of group '" + group.name() + "' is closed");
        }
    }

    /**
     * Frees this rank's part. A call on the buffer from another thread is waited for (up to the
     * collective deadline and 5 s more); one still running then, or a captured graph of the buffer still
     * open, refuses the close and leaves the buffer as it was, so closing it again later frees it.
     */
    @Override
    public void close() {
        if (!use.beginClose(group.closePatience())) {
            return;
        }
        int graphs = lane.liveGraphs();
        if (graphs > 0) {
            use.endClose(false);
            throw new CloseRefusedException("close of the " + dtype.shortName() + " buffer of group '" + group.name() + "' refused: "
                    + graphs + " captured graph(s) of " + lane.what() + " are open, and a replay would run on freed memory;"
                    + " close them first, then close this buffer again");
        }
        closed = true;
        try {
            if (ownsLane) {
                lane.close();  // waits for the stream first: nothing runs on memory about to go
            }
        } finally {
            try {
                memory.close();
            } finally {
                use.endClose(true);
                onClose.accept(this);
            }
        }
    }
}
