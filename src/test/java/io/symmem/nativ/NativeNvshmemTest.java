package io.symmem.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * NVSHMEM through the Java bindings, against the stand-in host library the native build makes
 * (target/native/tests/fake_nvshmem): paths and values come back whole, the not-found error names every
 * candidate, the environment is refused once NVSHMEM has read it. This JVM holds one NVSHMEM for good,
 * so the steps run in one test, in order. The real library runs on the GPU machine.
 */
class NativeNvshmemTest {
    private static final Path FAKE = Path.of("target/native/tests/fake_nvshmem/libnvshmem_host.so.3").toAbsolutePath();

    @Test
    void loadsFromCandidatesAndPassesTextAndIdsWhole() {
        assertThat(FAKE).as("the native build's stand-in library").exists();
        assertThatThrownBy(() -> NativeNvshmem.load(List.of("/nonexistent/a/libnvshmem_host.so.3", "libnope.so.3")))
                .isInstanceOf(NativeException.class)
                .hasMessageContaining("/nonexistent/a/libnvshmem_host.so.3: ").hasMessageContaining("libnope.so.3: ");

        String path = NativeNvshmem.load(List.of("/nonexistent/a/libnvshmem_host.so.3", FAKE.toString()));
        assertThat(path).isEqualTo(FAKE.toString()).doesNotContain("\0");
        assertThat(NativeNvshmem.version()).hasToString("3.4.5");

        NativeNvshmem.setenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "lo");
        assertThat(NativeNvshmem.getenv("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME")).contains("lo");
        assertThat(NativeNvshmem.getenv("NVSHMEM_SURELY_UNSET_HERE")).isEmpty();
        assertThatThrownBy(() -> NativeNvshmem.setenv("NCCL_SOCKET_IFNAME", "lo")).hasMessageContaining("not an NVSHMEM_");

        byte[] uid = NativeNvshmem.uniqueId();
        assertThat(uid).hasSize(NativeNvshmem.UNIQUE_ID_BYTES);
        assertThat(uid[4]).isEqualTo((byte) 'u');
        assertThatThrownBy(() -> NativeNvshmem.setenv("NVSHMEM_DEBUG", "INFO")).hasMessageContaining("too late");
        assertThatThrownBy(() -> NativeNvshmem.init(0, 0, 1, new byte[7])).hasMessageContaining("128 bytes, got 7");
        assertThat(NativeNvshmem.heapUsage()).isEqualTo(new NativeNvshmem.HeapUsage(0, 0));
        if (NativeCore.cudaDeviceCount() == 0) {
            // Without a GPU init stops at the device, before NVSHMEM is called.
            assertThatThrownBy(() -> NativeNvshmem.init(0, 0, 1, uid)).isInstanceOf(NativeException.class)
                    .hasMessageContaining("device 0");
            assertThat(NativeNvshmem.initialized()).isFalse();
        }
        assertThat(Files.exists(FAKE)).isTrue();
    }
}
