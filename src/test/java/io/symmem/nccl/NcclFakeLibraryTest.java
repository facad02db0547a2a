package io.symmem.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The Java API over a fake libnccl.so.2 (built by CMake in the native test tree, see
 * src/native-cuda/tests/fake_nccl.cpp): loading, version, unique id, a communicator, the checks on
 * buffers, abort and close, without a GPU. NCCL loads once per JVM, so the "not found" case runs
 * first. Skipped (not passed) when libsymmem was built without CUDA or the fake was not built; the
 * deadline paths are covered natively by test_nccl_fake.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NcclFakeLibraryTest {
    private static final Path FAKE = Path.of("target/native/tests/fake_nccl/libnccl.so.2").toAbsolutePath();
    private static final Duration D = Duration.ofSeconds(5);

    private static void assumeFake() {
        assumeTrue(NativeCore.builtWithCuda(), "skipped: libsymmem was built without CUDA (no NCCL module)");
        assumeTrue(Files.isRegularFile(FAKE), "skipped: the fake NCCL was not built at " + FAKE);
    }

    @Test
    @Order(1)
    void notFoundNamesEveryPlace(@org.junit.jupiter.api.io.TempDir Path tmp) {
        assumeFake();
        assumeTrue(!Nccl.isLoaded(), "skipped: NCCL already loaded in this JVM by another test");
        Path notALibrary = tmp.resolve("venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
        try {
            Files.createDirectories(notALibrary.getParent());
            Files.writeString(notALibrary, "not an ELF file");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        NcclLibraryCandidates c = NcclLibraryCandidates.of(Map.of("VIRTUAL_ENV", tmp.resolve("venv").toString(),
                "NCCL_HOME", tmp.resolve("none").toString()), tmp.resolve("home"), List.of());
        // The bare soname may resolve on a machine with NCCL installed: leave it out of this case.
        NcclLibraryCandidates onlyFiles = new FilesOnly(c).candidates();
        assertThatThrownBy(() -> Nccl.load(onlyFiles)).isInstanceOf(NativeException.NoDevice.class)
                .hasMessageContaining(tmp.resolve("none/lib/libnccl.so.2") + " [NCCL_HOME]: no such file")
                .hasMessageContaining(notALibrary + " [VIRTUAL_ENV]: ")
                .hasMessageContaining("SYMMEM_NCCL_LIBRARY");
        assertThat(Nccl.isLoaded()).isFalse();
    }

    @Test
    @Order(2)
    void loadsTheFakeAndReportsItsVersion() {
        assumeFake();
        NcclVersion v = Nccl.load(NcclLibraryCandidates.of(Map.of("SYMMEM_NCCL_LIBRARY", FAKE.toString()), null, List.of()));
        assertThat(v).isEqualTo(new NcclVersion(2, 28, 9, "", 22809));
        assertThat(Nccl.libraryPath()).isEqualTo(FAKE.toString());
        // The load settles what NCCL's first init will read: 0 unless this JVM's environment had a value.
        String env = System.getenv("NCCL_RUNTIME_CONNECT");
        assertThat(Nccl.runtimeConnect()).isEqualTo(env == null || env.isEmpty()
                ? "NCCL_RUNTIME_CONNECT=0 (set by symmem)"
                : "NCCL_RUNTIME_CONNECT=" + env + " (from the environment)");
        assertThat(Nccl.uniqueId()).hasSize(128);
    }

    @Test
    @Order(3)
    void aCommunicatorChecksItsBuffersAndClosesOnce() {
        assumeFake();
        Nccl.load(NcclLibraryCandidates.of(Map.of("SYMMEM_NCCL_LIBRARY", FAKE.toString()), null, List.of()));
        try (NativeBackend host = new NativeBackend("host", 0); LocalBuffer mem = host.allocateLocal(64)) {
            NcclCommunicator comm = NcclCommunicator.init(2, Nccl.uniqueId(), 1, -1, null, D, D);
            assertThat(comm.label()).isEqualTo("communicator of 2 ranks");
            NcclBuffer b = NcclBuffer.of(mem);
            assertThatThrownBy(() -> comm.allReduce(b, b, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("allReduce: send is memory of the host backend; NCCL needs GPU memory (cuda, nccl or nvshmem backend)");
            assertThatThrownBy(() -> comm.allReduce(null, b, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, null))
                    .hasMessage("allReduce: send must not be null");
            assertThatThrownBy(() -> comm.allReduce(b, b, 4, null, NcclRedOp.SUM, null))
                    .hasMessage("allReduce: dtype must not be null");
            assertThatThrownBy(() -> comm.allReduce(b, b, -1, NcclDataType.INT8, NcclRedOp.SUM, null))
                    .hasMessage("allReduce: count must be >= 0, got -1");
            assertThatThrownBy(() -> comm.allReduceRepeated(b, b, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, null, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("allReduce repeated: times must be >= 1, got 0");
            assertThatThrownBy(() -> comm.allReduceRepeated(b, b, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, null, 3))
                    .hasMessage("allReduce repeated: send is memory of the host backend; NCCL needs GPU memory (cuda, nccl or"
                            + " nvshmem backend)");
            assertThatThrownBy(() -> comm.broadcast(b, b, 4, NcclDataType.FLOAT32, 2, null))
                    .hasMessage("broadcast: root must be in 0..1 (communicator of 2 ranks), got 2");
            assertThatThrownBy(() -> comm.reduce(b, null, 4, NcclDataType.FLOAT32, NcclRedOp.MAX, 1, null))
                    .hasMessage("reduce: send is memory of the host backend; NCCL needs GPU memory (cuda, nccl or nvshmem backend)");
            try (var stream = host.createStream()) {
                assertThatThrownBy(() -> comm.synchronize(stream))
                        .hasMessage("synchronize: stream belongs to the host backend; NCCL needs a stream of a cuda backend");
            }
            assertThat(comm.isAborted()).isFalse();
            comm.abort("test gave up");
            assertThat(comm.isAborted()).isTrue();
            comm.close();
            comm.close();  // idempotent
            assertThat(comm.isClosed()).isTrue();
            assertThatThrownBy(() -> comm.allGather(b, b, 1, NcclDataType.FLOAT32, null))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("the communicator is closed");
            mem.close();
            NcclCommunicator other = NcclCommunicator.init(1, Nccl.uniqueId(), 0, -1, "group 'x'", D, D);
            assertThatThrownBy(() -> other.allReduce(b, b, 4, NcclDataType.FLOAT32, NcclRedOp.SUM, null))
                    .hasMessage("allReduce: send is freed");
            other.close();
        }
    }

    @Test
    @Order(4)
    void theProcessAbortReachesCommunicators() {
        assumeFake();
        Nccl.load(NcclLibraryCandidates.of(Map.of("SYMMEM_NCCL_LIBRARY", FAKE.toString()), null, List.of()));
        NcclCommunicator comm = NcclCommunicator.init(2, Nccl.uniqueId(), 0, -1, "group 'live'", D, D);
        try {
            NativeCore.abort("rank 1 is gone (NcclFakeLibraryTest)");
            assertThat(comm.isAborted()).isTrue();
            assertThatThrownBy(() -> NcclCommunicator.init(1, Nccl.uniqueId(), 0, -1, null, D, D))
                    .isInstanceOf(NativeException.Aborted.class).hasMessageContaining("rank 1 is gone");
        } finally {
            NativeCore.resetAbort();
            comm.close();
        }
        try (NcclCommunicator fresh = NcclCommunicator.init(1, Nccl.uniqueId(), 0, -1, null, D, D)) {
            assertThat(fresh.isAborted()).isFalse();
        }
    }

    @Test
    @Order(5)
    void aWindowNeedsASymmetricBufferInGpuMemory() {
        assumeFake();
        Nccl.load(NcclLibraryCandidates.of(Map.of("SYMMEM_NCCL_LIBRARY", FAKE.toString()), null, List.of()));
        try (NativeBackend host = new NativeBackend("host", 0); NativeBuffer buffer = host.allocate(4096);
                NcclCommunicator comm = NcclCommunicator.init(1, Nccl.uniqueId(), 0, -1, "group 'w'", D, D)) {
            assertThatThrownBy(() -> comm.registerWindow(null)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("registerWindow: buffer must not be null");
            assertThatThrownBy(() -> comm.registerWindow(buffer)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("memory of the host backend; an NCCL window needs GPU memory");
            // The fake has no ncclMemAlloc: the nccl backend says which NCCL it needs.
            assertThatThrownBy(() -> new NativeBackend("nccl", 0)).isInstanceOf(NativeException.Unsupported.class)
                    .hasMessageContaining("no ncclMemAlloc");
            assertThat(comm.isAborted()).isFalse();
        }
    }

    /** The candidates without the bare soname. */
    private record FilesOnly(NcclLibraryCandidates all) {
        NcclLibraryCandidates candidates() {
            return all.withoutSoname();
        }
    }
}
