package io.symmem.nativ;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.javacpp.annotation.ByPtrPtr;
import org.bytedeco.javacpp.annotation.Cast;
import org.bytedeco.javacpp.annotation.MemberGetter;
import org.bytedeco.javacpp.annotation.Name;
import org.bytedeco.javacpp.annotation.Opaque;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * JavaCPP declarations of symmem.h, one to one. JavaCPP's Maven plugin generates and compiles the JNI
 * glue from this class. Only {@link NativeCore} and the handle classes of this package call it: they
 * turn status codes into exceptions and own the handles' lifetimes.
 */
@Platform(include = "symmem.h", link = "symmem")
final class SymmemLibrary {
    static {
        NativeCache.useDirectoryBesideTheJar();  // before JavaCPP reads where to unpack (Pointer's initialiser)
        // Pointer first, before the Loader's lock: loading this library under that lock initialises Pointer,
        // while a thread that allocates the first handle initialises Pointer and then waits for that lock. Both
        // at once (--version's provider on main while the world's join opened its backend) was a deadlock.
        Pointer.maxBytes();
        Loader.load();
    }

    private SymmemLibrary() {
    }

    /**
     * Loads the JNI library (this class's initialiser) before any JavaCPP Pointer is allocated:
     * IntPointer/BytePointer natives live in the same library.
     */
    static void ensureLoaded() {
        // class initialisation has run Loader.load()
    }

    static final int SYMMEM_MAX_WORLD = 64;
    static final int SYMMEM_SIGNAL_CHANNELS = 32;
    static final int SYMMEM_FLOAT32 = 0;
    static final int SYMMEM_BFLOAT16 = 1;
    static final int SYMMEM_FLOAT16 = 2;
    static final int SYMMEM_SUM = 0;
    static final int SYMMEM_AVG = 1;
    static final int SYMMEM_MAX = 2;
    static final int SYMMEM_MIN = 3;
    static final int SYMMEM_ALGO_AUTO = 0;
    static final int SYMMEM_ALGO_ONE_SHOT = 1;
    static final int SYMMEM_ALGO_TWO_SHOT = 2;
    static final int SYMMEM_ALGO_TWO_SHOT_CE = 3;
    static final int SYMMEM_RANK_SELF = -1;
    static final int SYMMEM_TOPOLOGY_MAX_DEVICES = 16;
    static final int SYMMEM_MULTICAST_UNSUPPORTED = 0;
    static final int SYMMEM_MULTICAST_SUPPORTED = 1;
    static final int SYMMEM_MULTICAST_DISABLED = 2;

    @Opaque
    @Name("symmem_channel")
    static class ChannelHandle extends Pointer {
        ChannelHandle() {
            super((Pointer) null);
        }
    }

    @Opaque
    @Name("symmem_backend")
    static class BackendHandle extends Pointer {
        BackendHandle() {
            super((Pointer) null);
        }
    }

    @Opaque
    @Name("symmem_buffer")
    static class BufferHandle extends Pointer {
        BufferHandle() {
            super((Pointer) null);
        }
    }

    @Opaque
    @Name("symmem_stream_marker")
    static class MarkerHandle extends Pointer {
        MarkerHandle() {
            super((Pointer) null);
        }
    }

    @Opaque
    @Name("symmem_graph")
    static class GraphHandle extends Pointer {
        GraphHandle() {
            super((Pointer) null);
        }
    }

    @Name("symmem_backend_info")
    static class BackendInfo extends Pointer {
        static {
            ensureLoaded();  // the outer initialiser first: it chooses where JavaCPP unpacks (NativeCache)
            Loader.load();
        }

        BackendInfo() {
            allocate();
        }

        private native void allocate();

        @MemberGetter
        @Name("name")
        native @Cast("const char*") BytePointer name();

        @MemberGetter
        @Name("device_name")
        native @Cast("const char*") BytePointer deviceName();

        @MemberGetter
        @Name("device")
        native int device();

        @MemberGetter
        @Name("device_count")
        native int deviceCount();
    }

    @Name("symmem_topology")
    static class Topology extends Pointer {
        static {
            ensureLoaded();  // the outer initialiser first: it chooses where JavaCPP unpacks (NativeCache)
            Loader.load();
        }

        Topology() {
            allocate();
        }

        private native void allocate();

        @MemberGetter
        @Name("device_count")
        native int deviceCount();

        @MemberGetter
        @Name("can_access_peer")
        native int canAccessPeer(int i, int j);

        @MemberGetter
        @Name("performance_rank")
        native int performanceRank(int i, int j);

        @MemberGetter
        @Name("native_atomics")
        native int nativeAtomics(int i, int j);

        @MemberGetter
        @Name("multicast")
        native int multicast(int i);

        @MemberGetter
        @Name("vmm_supported")
        native int vmmSupported(int i);

        @MemberGetter
        @Name("uuid")
        native @Cast("uint8_t") byte uuid(int i, int j);

        @MemberGetter
        @Name("name")
        native @Cast("char*") BytePointer name(int i);
    }

    // library
    static native @Cast("const char*") BytePointer symmem_last_error();

    static native @Cast("const char*") BytePointer symmem_version();

    static native int symmem_abi_version();

    static native int symmem_built_with_cuda();

    static native int symmem_close_fd(int fd);

    // native tunables
    static native int symmem_tunable_count();

    static native @Cast("const char*") BytePointer symmem_tunable_name(int index);

    static native @Cast("const char*") BytePointer symmem_tunable_backend(int index);

    static native @Cast("const char*") BytePointer symmem_tunable_allowed(int index);

    static native int symmem_tunable_check(int index);

    static native int symmem_tunable_value(int index, @Cast("uint64_t*") LongPointer value, IntPointer isSet);

    // abort
    static native int symmem_abort(String reason);

    static native void symmem_abort_reset();

    static native int symmem_aborted();

    // channel
    static native int symmem_channel_open(String name, @ByPtrPtr ChannelHandle out);

    static native int symmem_channel_close(ChannelHandle channel);

    static native int symmem_channel_send_fd(ChannelHandle channel, String peerName, int rank, int tag, int fd,
            int timeoutMs);

    static native int symmem_channel_recv_fd(ChannelHandle channel, int tag, IntPointer outRank, IntPointer outFd,
            int timeoutMs);

    static native int symmem_channel_all_gather_fds(ChannelHandle channel,
            @Cast("const char* const*") PointerPointer<?> peerNames, int rank, int world, int tag, int fd,
            IntPointer outFds, int timeoutMs);

    static native int symmem_channel_broadcast_fds(ChannelHandle channel,
            @Cast("const char* const*") PointerPointer<?> peerNames, int rank, int world, int root, int tag, int fd,
            IntPointer outFd, int timeoutMs);

    // backends
    static native int symmem_backend_open(String name, int device, @ByPtrPtr BackendHandle out);

    static native int symmem_backend_close(BackendHandle backend);

    static native int symmem_backend_get_info(BackendHandle backend, BackendInfo out);

    static native int symmem_cuda_device_count(IntPointer out);

    // buffers
    static native int symmem_buffer_alloc(BackendHandle backend, @Cast("uint64_t") long sizeBytes,
            @ByPtrPtr BufferHandle out);

    static native int symmem_buffer_export_fd(BufferHandle buffer, IntPointer outFd);

    static native int symmem_buffer_import(BufferHandle buffer, int rank, int world, @Cast("const int*") int[] fds);

    static native int symmem_buffer_free(BufferHandle buffer);

    static native @Cast("uint64_t") long symmem_buffer_size(BufferHandle buffer);

    static native int symmem_buffer_rank(BufferHandle buffer);

    static native int symmem_buffer_world(BufferHandle buffer);

    static native Pointer symmem_buffer_ptr(BufferHandle buffer, int r);

    static native Pointer symmem_buffer_signal_pad(BufferHandle buffer, int r);

    // synchronisation
    static native int symmem_put_signal(BufferHandle buffer, int peer, int channel, int timeoutMs);

    static native int symmem_wait_signal(BufferHandle buffer, int peer, int channel, int timeoutMs);

    static native int symmem_barrier(BufferHandle buffer, int channel, int timeoutMs);

    // streams, memset/write, synchronisation, collectives with dtype/op/algo
    static native @Cast("size_t") long symmem_dtype_size(@Cast("symmem_dtype") int dtype);

    static native int symmem_put_signal_on_stream(BufferHandle buffer, int peer, int channel, Pointer stream,
            int timeoutMs);

    static native int symmem_wait_signal_on_stream(BufferHandle buffer, int peer, int channel, Pointer stream,
            int timeoutMs);

    static native int symmem_barrier_on_stream(BufferHandle buffer, int channel, Pointer stream, int timeoutMs);

    // value signals (op: symmem_signal_op, cmp: symmem_signal_cmp)
    static native int symmem_signal_value(BufferHandle buffer, int peer, int channel, @Cast("uint64_t") long value,
            @Cast("symmem_signal_op") int op);
    static native int symmem_wait_signal_value(BufferHandle buffer, int peer, int channel,
            @Cast("symmem_signal_cmp") int cmp, @Cast("uint64_t") long value, int timeoutMs);
    static native int symmem_signal_value_on_stream(BufferHandle buffer, int peer, int channel,
            @Cast("uint64_t") long value, @Cast("symmem_signal_op") int op, Pointer stream);
    static native int symmem_wait_signal_value_on_stream(BufferHandle buffer, int peer, int channel,
            @Cast("symmem_signal_cmp") int cmp, @Cast("uint64_t") long value, Pointer stream, int timeoutMs);

    static native int symmem_memset32(BufferHandle buffer, int r, @Cast("uint64_t") long offsetBytes,
            @Cast("uint32_t") int value, @Cast("uint64_t") long count, Pointer stream);

    static native int symmem_stream_write_value32(BufferHandle buffer, int r, @Cast("uint64_t") long offsetBytes,
            @Cast("uint32_t") int value, Pointer stream);

    static native int symmem_stream_synchronize(BufferHandle buffer, Pointer stream);

    static native int symmem_cuda_check(BufferHandle buffer);

    static native int symmem_all_reduce(BufferHandle buffer, @Cast("symmem_algo") int algo,
            @Cast("symmem_dtype") int dtype, @Cast("symmem_reduce_op") int op, @Cast("uint64_t") long count,
            Pointer out, Pointer stream, int timeoutMs);

    static native int symmem_all_gather(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("uint64_t") long count, Pointer out, Pointer stream, int timeoutMs);

    static native int symmem_reduce_scatter(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("symmem_reduce_op") int op, @Cast("uint64_t") long count, Pointer out, Pointer stream,
            int timeoutMs);

    static native int symmem_broadcast(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("uint64_t") long count, int root, Pointer out, Pointer stream, int timeoutMs);

    static native int symmem_all_to_all(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("uint64_t") long count, Pointer out, Pointer stream, int timeoutMs);

    static native int symmem_all_to_all_v(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("uint64_t") long splitsOffset, Pointer out, @Cast("uint64_t") long outCapacity,
            @Cast("int64_t*") Pointer outSplits, Pointer stream, int timeoutMs);

    static native int symmem_all_reduce_auto_algo(BufferHandle buffer, @Cast("symmem_dtype") int dtype,
            @Cast("uint64_t") long count, int inPlace, @Cast("symmem_algo*") IntPointer outAlgo);

    static native @Cast("uint64_t") long symmem_one_shot_in_place_max_bytes(BufferHandle buffer);

    static native int symmem_buffer_device_uuid(BufferHandle buffer, int r, @Cast("uint8_t*") BytePointer outUuid);

    static native int symmem_cuda_topology(Topology out);

    // views and stream markers (the memory pool)
    static final int SYMMEM_VIEW_ALIGNMENT = 64;

    static native int symmem_buffer_view(BufferHandle segment, @Cast("uint64_t") long offset,
            @Cast("uint64_t") long size, @ByPtrPtr BufferHandle out);

    static native int symmem_buffer_live_views(BufferHandle buffer);

    static native int symmem_stream_marker_record(BackendHandle backend, Pointer stream, @ByPtrPtr MarkerHandle out);

    static native int symmem_stream_marker_query(MarkerHandle marker, IntPointer outPassed);

    static native int symmem_stream_marker_wait(MarkerHandle marker, int timeoutMs);

    static native int symmem_stream_marker_free(MarkerHandle marker);

    // CUDA graphs
    static native int symmem_graph_capture_begin(BackendHandle backend, Pointer stream);

    static native int symmem_graph_capture_end(BackendHandle backend, Pointer stream, @ByPtrPtr GraphHandle out);

    static native int symmem_graph_replay(GraphHandle graph, Pointer stream);

    static native int symmem_graph_synchronize(GraphHandle graph, Pointer stream);

    static native int symmem_graph_buffer_count(GraphHandle graph);

    static native @Cast("uint64_t") long symmem_graph_node_count(GraphHandle graph);

    static native int symmem_graph_free(GraphHandle graph);

    // data movement, local memory, streams
    static native int symmem_put_on_stream(BufferHandle buffer, int r, @Cast("uint64_t") long offset,
            @Cast("const void*") Pointer src, @Cast("uint64_t") long bytes, Pointer stream);

    static native int symmem_get_on_stream(BufferHandle buffer, int r, @Cast("uint64_t") long offset, Pointer dst,
            @Cast("uint64_t") long bytes, Pointer stream);

    static native int symmem_buffer_copy_in(BufferHandle buffer, int r, @Cast("uint64_t") long offset,
            @Cast("const void*") Pointer src, @Cast("uint64_t") long bytes);

    static native int symmem_buffer_copy_out(BufferHandle buffer, int r, @Cast("uint64_t") long offset,
            Pointer dst, @Cast("uint64_t") long bytes);

    static native int symmem_local_alloc(BackendHandle backend, @Cast("uint64_t") long bytes,
            @Cast("void**") PointerPointer<?> out);

    static native int symmem_local_free(BackendHandle backend, Pointer local);

    static native int symmem_local_copy_in(BackendHandle backend, Pointer local, @Cast("uint64_t") long offset,
            @Cast("const void*") Pointer src, @Cast("uint64_t") long bytes);

    static native int symmem_local_copy_out(BackendHandle backend, @Cast("const void*") Pointer local,
            @Cast("uint64_t") long offset, Pointer dst, @Cast("uint64_t") long bytes);

    static native int symmem_stream_create(BackendHandle backend, @Cast("void**") PointerPointer<?> outStream);

    static native int symmem_stream_destroy(BackendHandle backend, Pointer stream);

    // ---- NVSHMEM (loaded at run time) ----
    static final int SYMMEM_NVSHMEM_UNIQUEID_BYTES = 128;

    static native int symmem_nvshmem_load(@Cast("const char* const*") PointerPointer<?> candidates, int count,
            @Cast("char*") BytePointer loadedPath, @Cast("size_t") long cap);

    static native int symmem_nvshmem_version(IntPointer major, IntPointer minor, IntPointer patch);

    static native int symmem_nvshmem_setenv(String name, String value);

    static native int symmem_nvshmem_getenv(String name, @Cast("char*") BytePointer out, @Cast("size_t") long cap,
            IntPointer isSet);

    static native int symmem_nvshmem_get_uniqueid(@Cast("uint8_t*") BytePointer out);

    static native int symmem_nvshmem_init(int device, int rank, int world, @Cast("const uint8_t*") BytePointer uid);

    static native int symmem_nvshmem_initialized();

    static native int symmem_nvshmem_pe(IntPointer myPe, IntPointer nPes);

    static native int symmem_nvshmem_heap_usage(@Cast("uint64_t*") LongPointer bytes, IntPointer buffers);

    static native int symmem_nvshmem_finalize();

    static native int symmem_nvshmem_team_split_strided(int start, int stride, int size, IntPointer outTeam);

    static native int symmem_nvshmem_team_translate_pe(int team, int teamPe, IntPointer outWorldPe);

    static native int symmem_nvshmem_team_destroy(int team);

    static native int symmem_buffer_import_pes(BufferHandle buffer, int rank, int world, @Cast("const int*") int[] pes);

    // ==== NCCL: symmem.h's NCCL section, one to one. Device buffers travel as addresses
    // (long), so that a buffer's offset is plain arithmetic and any memory owner (LocalBuffer now,
    // symmetric buffers later) can pass its pointer. NativeNccl is the only caller. ==============
    static final int SYMMEM_NCCL_UNIQUE_ID_BYTES = 128;

    @Opaque
    @Name("symmem_nccl_comm")
    static class NcclCommHandle extends Pointer {
        NcclCommHandle() {
            super((Pointer) null);
        }
    }

    static native int symmem_nccl_load(@Cast("const char* const*") PointerPointer<?> paths, int n);

    static native int symmem_nccl_loaded();

    static native @Cast("const char*") BytePointer symmem_nccl_library_path();

    static native @Cast("const char*") BytePointer symmem_nccl_runtime_connect();

    static native int symmem_nccl_version(IntPointer outCode, IntPointer outMajor, IntPointer outMinor,
            IntPointer outPatch);

    static native int symmem_nccl_unique_id(@Cast("uint8_t*") BytePointer outId);

    static native int symmem_nccl_comm_init_rank(int nranks, @Cast("const uint8_t*") BytePointer uniqueId, int rank,
            int device, String label, int timeoutMs, @ByPtrPtr NcclCommHandle out);

    static native int symmem_nccl_comm_abort(NcclCommHandle comm, String reason);

    static native int symmem_nccl_comm_aborted(NcclCommHandle comm);

    static native int symmem_nccl_comm_destroy(NcclCommHandle comm, int timeoutMs);

    // The per-call functions take the communicator and the stream as addresses too: a Pointer argument costs the
    // JNI glue a GetLongField (a call into the JVM) per field it reads, three per collective.
    static native int symmem_nccl_comm_synchronize(@Cast("symmem_nccl_comm*") long comm, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_all_reduce(@Cast("symmem_nccl_comm*") long comm, @Cast("const void*") long send,
            @Cast("void*") long recv, @Cast("uint64_t") long count, int dtype, int op, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_all_reduce_repeated(@Cast("symmem_nccl_comm*") long comm,
            @Cast("const void*") long send, @Cast("void*") long recv, @Cast("uint64_t") long count, int dtype, int op,
            @Cast("void*") long stream, int timeoutMs, int times);

    static native int symmem_nccl_reduce(@Cast("symmem_nccl_comm*") long comm, @Cast("const void*") long send,
            @Cast("void*") long recv, @Cast("uint64_t") long count, int dtype, int op, int root, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_broadcast(@Cast("symmem_nccl_comm*") long comm, @Cast("const void*") long send,
            @Cast("void*") long recv, @Cast("uint64_t") long count, int dtype, int root, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_all_gather(@Cast("symmem_nccl_comm*") long comm, @Cast("const void*") long send,
            @Cast("void*") long recv, @Cast("uint64_t") long sendCount, int dtype, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_reduce_scatter(@Cast("symmem_nccl_comm*") long comm, @Cast("const void*") long send,
            @Cast("void*") long recv, @Cast("uint64_t") long recvCount, int dtype, int op, @Cast("void*") long stream,
            int timeoutMs);

    static native int symmem_nccl_group_start();

    static native int symmem_nccl_group_end(int timeoutMs);

    @Opaque
    @Name("symmem_nccl_window")
    static class NcclWindowHandle extends Pointer {
        NcclWindowHandle() {
            super((Pointer) null);
        }
    }

    static native int symmem_nccl_window_register(NcclCommHandle comm, BufferHandle buffer, int flags, int timeoutMs,
            @ByPtrPtr NcclWindowHandle out);

    static native int symmem_nccl_window_deregister(NcclWindowHandle window, int timeoutMs);
    // ==== end of NCCL section ====================================================================
}
