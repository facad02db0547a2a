package io.symmem.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JavaCPP bindings: the library loads, status codes become typed exceptions with the native message. */
class NativeBindingsTest {

    @Test
    void libraryLoadsAndReportsItsVersion() {
        assertThat(NativeCore.version()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(NativeCore.abiVersion()).isEqualTo(1);
        assertThat(NativeCore.cudaDeviceCount()).isGreaterThanOrEqualTo(0);
    }

    @Test
    void unknownBackendIsAnInvalidArgumentNamingTheAllowedOnes() {
        assertThatThrownBy(() -> new NativeBackend("nope", 0))
                .isInstanceOf(NativeException.InvalidArgument.class)
                .hasMessageContaining("nope").hasMessageContaining("host").hasMessageContaining("cuda");
    }

    @Test
    void cudaWithoutADeviceSaysSo() {
        if (NativeCore.cudaDeviceCount() > 0) {
            System.out.println("SKIPPED cudaWithoutADeviceSaysSo: this machine has a CUDA device");
            org.junit.jupiter.api.Assumptions.abort("this machine has a CUDA device");
        }
        if (NativeCore.builtWithCuda()) {
            assertThatThrownBy(() -> new NativeBackend("cuda", 0))
                    .isInstanceOf(NativeException.NoDevice.class).hasMessageContaining("no CUDA device");
        } else {
            assertThatThrownBy(() -> new NativeBackend("cuda", 0))
                    .isInstanceOf(NativeException.Unsupported.class).hasMessageContaining("without CUDA");
        }
    }

    @Test
    void hostBackendSingleRankBufferWorksEndToEnd() {
        try (NativeBackend backend = new NativeBackend("host", -1)) {
            assertThat(backend.name()).isEqualTo("host");
            assertThat(backend.deviceName()).isEqualTo("cpu");
            try (NativeBuffer buffer = backend.allocate(4096);
                    NativeChannel channel = new NativeChannel("symmem-test-" + ProcessHandle.current().pid())) {
                int[] fds = channel.allGatherFds(List.of(channel.name()), 0, 0, buffer.exportFd(), Duration.ofSeconds(5));
                buffer.importPeers(0, fds);
                Fds.closeAll(fds);
                buffer.view(0).asFloatBuffer().put(new float[] {1.5f, -2f, 3.25f});
                float[] sum = new float[3];
                try (LocalBuffer out = backend.allocateLocal(12)) {
                    buffer.allReduce(SymmemLibrary.SYMMEM_ALGO_ONE_SHOT, SymmemLibrary.SYMMEM_FLOAT32,
                            SymmemLibrary.SYMMEM_SUM, 3, out, null, Duration.ofSeconds(5));
                    out.copyTo(sum, 0);
                }
                assertThat(sum).containsExactly(1.5f, -2f, 3.25f);
                buffer.barrier(1, Duration.ofSeconds(1));
            }
        }
    }

    @Test
    void badArgumentsAreNamed() {
        try (NativeBackend backend = new NativeBackend("host", -1)) {
            assertThatThrownBy(() -> backend.allocate(0)).isInstanceOf(NativeException.InvalidArgument.class)
                    .hasMessageContaining("size");
            try (NativeBuffer buffer = backend.allocate(64)) {
                // Before import there is no peer to signal.
                assertThatThrownBy(() -> buffer.barrier(0, Duration.ofMillis(100))).isInstanceOf(NativeException.class);
                assertThatThrownBy(() -> buffer.barrier(0, Duration.ZERO)).isInstanceOf(NativeException.InvalidArgument.class)
                        .hasMessageContaining("timeout");
            }
        }
    }
}
