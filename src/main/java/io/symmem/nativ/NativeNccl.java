package io.symmem.nativ;

import java.util.List;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * The NCCL calls of libsymmem (symmem.h's NCCL section) with Java types: status codes become
 * {@link NativeException}s carrying the library's message. Arguments are checked by the caller
 * ({@code io.symmem.nccl}); this class only turns memory owners into addresses.
 */
public final class NativeNccl {
    static {
        SymmemLibrary.ensureLoaded();
    }

    public static final int UNIQUE_ID_BYTES = SymmemLibrary.SYMMEM_NCCL_UNIQUE_ID_BYTES;

    private NativeNccl() {
    }

    /** Tries the candidates in order (see symmem_nccl_load); the message names each and why it failed. */
    public static void load(List<String> candidates) {
        if (candidates.isEmpty()) {
            throw new NativeException.InvalidArgument("no NCCL candidates to load");
        }
        try (PointerPointer<BytePointer> paths = new PointerPointer<>(candidates.toArray(new String[0]))) {
            Status.check(SymmemLibrary.symmem_nccl_load(paths, candidates.size()), "symmem_nccl_load");
        }
    }

    public static boolean loaded() {
        return SymmemLibrary.symmem_nccl_loaded() != 0;
    }

    /** The file NCCL was loaded from; "" before loading. */
    public static String libraryPath() {
        return SymmemLibrary.symmem_nccl_library_path().getString();
    }

    /** NCCL_RUNTIME_CONNECT as NCCL will read it and from where; "" before loading. */
    public static String runtimeConnect() {
        return SymmemLibrary.symmem_nccl_runtime_connect().getString();
    }

    /** {code, major, minor, patch}. */
    public static int[] version() {
        try (IntPointer code = new IntPointer(1); IntPointer major = new IntPointer(1); IntPointer minor = new IntPointer(1);
                IntPointer patch = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nccl_version(code, major, minor, patch), "symmem_nccl_version");
            return new int[] {code.get(), major.get(), minor.get(), patch.get()};
        }
    }

    public static byte[] uniqueId() {
        try (BytePointer out = new BytePointer(UNIQUE_ID_BYTES)) {
            Status.check(SymmemLibrary.symmem_nccl_unique_id(out), "symmem_nccl_unique_id");
            byte[] id = new byte[UNIQUE_ID_BYTES];
            out.get(id);
            return id;
        }
    }

    public static Comm initRank(int nranks, byte[] uniqueId, int rank, int device, String label, int timeoutMs) {
        SymmemLibrary.NcclCommHandle handle = new SymmemLibrary.NcclCommHandle();
        try (BytePointer uid = new BytePointer(uniqueId)) {
            Status.check(SymmemLibrary.symmem_nccl_comm_init_rank(nranks, uid, rank, device, label, timeoutMs, handle),
                    "symmem_nccl_comm_init_rank");
        }
        return new Comm(handle);
    }

    public static void groupStart() {
        Status.check(SymmemLibrary.symmem_nccl_group_start(), "symmem_nccl_group_start");
    }

    public static void groupEnd(int timeoutMs) {
        Status.check(SymmemLibrary.symmem_nccl_group_end(timeoutMs), "symmem_nccl_group_end");
    }

    /** Device address of {@code memory} + {@code offset}; 0 for null memory (an unused argument). */
    static long address(DeviceMemory memory, long offset) {
        if (memory == null) {
            return 0;
        }
        if (memory instanceof LocalBuffer local) {
            return local.address() + offset;
        }
        if (memory instanceof NativeBuffer symmetric) {
            return symmetric.dataAddress() + offset;
        }
        throw new IllegalArgumentException("unknown memory owner " + memory.getClass().getName());
    }

    /** One communicator handle. Not thread-safe by itself: {@code NcclCommunicator} serialises. */
    public static final class Comm {
        private SymmemLibrary.NcclCommHandle handle;
        /** handle's address, what the per-call functions take; 0 once destroyed. */
        private long address;

        private Comm(SymmemLibrary.NcclCommHandle handle) {
            this.handle = handle;
            this.address = handle.address();
        }

        private SymmemLibrary.NcclCommHandle open() {
            if (handle == null) {
                throw new IllegalStateException("NCCL communicator is destroyed");
            }
            return handle;
        }

        private long openAddress() {
            if (address == 0) {
                throw new IllegalStateException("NCCL communicator is destroyed");
            }
            return address;
        }

        public void allReduce(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long count,
                int dtype, int op, NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_all_reduce(openAddress(), address(send, sendOffset),
                    address(recv, recvOffset), count, dtype, op, NativeStream.address(stream), timeoutMs),
                    "symmem_nccl_all_reduce");
        }

        /** {@code times} all-reduces enqueued by one native call that loops in C (symmem.h: a measurement aid). */
        public void allReduceRepeated(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long count,
                int dtype, int op, NativeStream stream, int timeoutMs, int times) {
            Status.check(SymmemLibrary.symmem_nccl_all_reduce_repeated(openAddress(), address(send, sendOffset),
                    address(recv, recvOffset), count, dtype, op, NativeStream.address(stream), timeoutMs, times),
                    "symmem_nccl_all_reduce_repeated");
        }

        public void reduce(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long count, int dtype,
                int op, int root, NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_reduce(openAddress(), address(send, sendOffset), address(recv, recvOffset),
                    count, dtype, op, root, NativeStream.address(stream), timeoutMs), "symmem_nccl_reduce");
        }

        public void broadcast(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long count,
                int dtype, int root, NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_broadcast(openAddress(), address(send, sendOffset),
                    address(recv, recvOffset), count, dtype, root, NativeStream.address(stream), timeoutMs),
                    "symmem_nccl_broadcast");
        }

        public void allGather(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long sendCount,
                int dtype, NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_all_gather(openAddress(), address(send, sendOffset),
                    address(recv, recvOffset), sendCount, dtype, NativeStream.address(stream), timeoutMs),
                    "symmem_nccl_all_gather");
        }

        public void reduceScatter(DeviceMemory send, long sendOffset, DeviceMemory recv, long recvOffset, long recvCount,
                int dtype, int op, NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_reduce_scatter(openAddress(), address(send, sendOffset),
                    address(recv, recvOffset), recvCount, dtype, op, NativeStream.address(stream), timeoutMs),
                    "symmem_nccl_reduce_scatter");
        }

        public void synchronize(NativeStream stream, int timeoutMs) {
            Status.check(SymmemLibrary.symmem_nccl_comm_synchronize(openAddress(), NativeStream.address(stream), timeoutMs),
                    "symmem_nccl_comm_synchronize");
        }

        /**
         * Registers {@code buffer}'s own allocation as an NCCL window of this communicator (collective;
         * see symmem_nccl_window_register). {@code symmetric}: NCCL_WIN_COLL_SYMMETRIC.
         */
        public Window registerWindow(NativeBuffer buffer, boolean symmetric, int timeoutMs) {
            SymmemLibrary.NcclWindowHandle out = new SymmemLibrary.NcclWindowHandle();
            Status.check(SymmemLibrary.symmem_nccl_window_register(open(), buffer.handle(), symmetric ? 1 : 0, timeoutMs,
                    out), "symmem_nccl_window_register");
            return new Window(out);
        }

        public void abort(String reason) {
            Status.check(SymmemLibrary.symmem_nccl_comm_abort(open(), reason), "symmem_nccl_comm_abort");
        }

        public boolean aborted() {
            return handle != null && SymmemLibrary.symmem_nccl_comm_aborted(handle) != 0;
        }

        /** Frees the handle in every case (see symmem_nccl_comm_destroy); throws what went wrong. */
        public void destroy(int timeoutMs) {
            if (handle == null) {
                return;
            }
            int status = SymmemLibrary.symmem_nccl_comm_destroy(handle, timeoutMs);
            if (status != ErrorCode.STATE.code()) {  // STATE: still in an open group, nothing freed
                handle = null;
                address = 0;
            }
            Status.check(status, "symmem_nccl_comm_destroy");
        }
    }

    /** One registered NCCL window. Not thread-safe by itself: {@code NcclWindow} serialises. */
    public static final class Window {
        private SymmemLibrary.NcclWindowHandle handle;

        private Window(SymmemLibrary.NcclWindowHandle handle) {
            this.handle = handle;
        }

        public boolean isDeregistered() {
            return handle == null;
        }

        /** Deregisters (collective); the record is freed in every case, errors are thrown after. */
        public void deregister(int timeoutMs) {
            if (handle == null) {
                return;
            }
            SymmemLibrary.NcclWindowHandle h = handle;
            handle = null;
            Status.check(SymmemLibrary.symmem_nccl_window_deregister(h, timeoutMs), "symmem_nccl_window_deregister");
        }
    }
}
