package io.symmem.nativ;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * The process's NVSHMEM, as libsymmem reaches it: loaded at run time from candidate paths, its
 * environment set before it reads it, joined by unique id, finalized once. Which calls are collective
 * over every PE, and why only NVSHMEM's host library is used: symmem.h and docs/nvshmem.md.
 */
public final class NativeNvshmem {
    public static final int UNIQUE_ID_BYTES = SymmemLibrary.SYMMEM_NVSHMEM_UNIQUEID_BYTES;

    /** NVSHMEM's version. */
    public record Version(int major, int minor, int patch) {
        @Override
        public String toString() {
            return major + "." + minor + "." + patch;
        }
    }

    /** Heap held by this process's live nvshmem buffers. */
    public record HeapUsage(long bytes, int buffers) {
    }

    static {
        SymmemLibrary.ensureLoaded();
    }

    private NativeNvshmem() {
    }

    /**
     * Opens the first candidate that is NVSHMEM's host library and returns the path it was loaded
     * from; the error lists every candidate and why it failed. Already loaded: the earlier path.
     */
    public static String load(List<String> candidates) {
        if (candidates.isEmpty()) {
            throw new IllegalArgumentException("no candidate path for NVSHMEM's host library");
        }
        try (PointerPointer<BytePointer> paths = new PointerPointer<>(candidates.toArray(new String[0]));
                BytePointer loaded = new BytePointer(4096)) {
            Status.check(SymmemLibrary.symmem_nvshmem_load(paths, candidates.size(), loaded, 4096),
                    "symmem_nvshmem_load");
            return cString(loaded);
        }
    }

    /**
     * The NUL-terminated text in a buffer the native side filled: JavaCPP's getString reads up to the
     * buffer's limit, which for a freshly allocated buffer is its whole capacity.
     */
    static String cString(BytePointer filled) {
        byte[] all = new byte[(int) filled.capacity()];
        filled.get(all);
        int end = 0;
        while (end < all.length && all[end] != 0) {
            end++;
        }
        return new String(all, 0, end, StandardCharsets.UTF_8);
    }

    public static Version version() {
        try (IntPointer a = new IntPointer(1); IntPointer b = new IntPointer(1); IntPointer c = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_version(a, b, c), "symmem_nvshmem_version");
            return new Version(a.get(), b.get(), c.get());
        }
    }

    /** Sets an NVSHMEM_* variable for NVSHMEM; refused once NVSHMEM has read its environment. */
    public static void setenv(String name, String value) {
        Status.check(SymmemLibrary.symmem_nvshmem_setenv(name, value), "symmem_nvshmem_setenv");
    }

    /** The value NVSHMEM will read for {@code name} (this process's environment as native code sees it). */
    public static Optional<String> getenv(String name) {
        try (BytePointer out = new BytePointer(4096); IntPointer set = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_getenv(name, out, 4096, set), "symmem_nvshmem_getenv");
            return set.get() != 0 ? Optional.of(cString(out)) : Optional.empty();
        }
    }

    /** Rank 0's unique id (NVSHMEM binds the socket the other PEs join). */
    public static byte[] uniqueId() {
        try (BytePointer out = new BytePointer(UNIQUE_ID_BYTES)) {
            Status.check(SymmemLibrary.symmem_nvshmem_get_uniqueid(out), "symmem_nvshmem_get_uniqueid");
            byte[] id = new byte[UNIQUE_ID_BYTES];
            out.get(id);
            return id;
        }
    }

    /** Joins the NVSHMEM world; returns once every PE has joined (NVSHMEM sets no deadline). */
    public static void init(int device, int rank, int world, byte[] uniqueId) {
        if (uniqueId.length != UNIQUE_ID_BYTES) {
            throw new IllegalArgumentException("NVSHMEM unique id must be " + UNIQUE_ID_BYTES + " bytes, got "
                    + uniqueId.length);
        }
        try (BytePointer uid = new BytePointer(uniqueId)) {
            Status.check(SymmemLibrary.symmem_nvshmem_init(device, rank, world, uid), "symmem_nvshmem_init");
        }
    }

    public static boolean initialized() {
        return SymmemLibrary.symmem_nvshmem_initialized() != 0;
    }

    /** {my PE, number of PEs}. */
    public static int[] pe() {
        try (IntPointer me = new IntPointer(1); IntPointer n = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_pe(me, n), "symmem_nvshmem_pe");
            return new int[] {me.get(), n.get()};
        }
    }

    public static HeapUsage heapUsage() {
        try (LongPointer bytes = new LongPointer(1); IntPointer buffers = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_heap_usage(bytes, buffers), "symmem_nvshmem_heap_usage");
            return new HeapUsage(bytes.get(), buffers.get());
        }
    }

    /** Leaves the NVSHMEM world (collective over every PE). */
    public static void finalizeWorld() {
        Status.check(SymmemLibrary.symmem_nvshmem_finalize(), "symmem_nvshmem_finalize");
    }

    /** A team of PEs start, start + stride, ...; collective over every PE; -1 on the PEs outside it. */
    public static int teamSplitStrided(int start, int stride, int size) {
        try (IntPointer team = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_team_split_strided(start, stride, size, team),
                    "symmem_nvshmem_team_split_strided");
            return team.get();
        }
    }

    public static int teamTranslatePe(int team, int teamPe) {
        try (IntPointer world = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_nvshmem_team_translate_pe(team, teamPe, world),
                    "symmem_nvshmem_team_translate_pe");
            return world.get();
        }
    }

    public static void teamDestroy(int team) {
        Status.check(SymmemLibrary.symmem_nvshmem_team_destroy(team), "symmem_nvshmem_team_destroy");
    }
}
