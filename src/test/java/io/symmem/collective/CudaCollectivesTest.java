package io.symmem.collective;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.nativ.LocalBuffer;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeChannel;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeStream;
import io.symmem.nativ.Fds;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java API on the cuda backend, one rank (world 1) on device 0: copies, a stream, all-reduce
 * into device memory, the host-view refusal. Skipped (never passed) without a CUDA device; the
 * multi-GPU runs are scripts/gpu/run-cuda.sh's.
 */
class CudaCollectivesTest {
    @BeforeEach
    void requireCuda() {
        if (!NativeCore.builtWithCuda() || NativeCore.cudaDeviceCount() == 0) {
            System.out.println("SKIPPED: no CUDA device (" + getClass().getSimpleName() + ")");
            Assumptions.abort("SKIPPED: no CUDA device");
        }
    }

    @Test
    void oneRankRoundTripOnDevice() {
        Duration timeout = Duration.ofSeconds(20);
        try (NativeBackend backend = new NativeBackend("cuda", 0);
                NativeBuffer buffer = backend.allocate(1 << 20);
                NativeChannel channel = new NativeChannel("symmem-cudatest-" + ProcessHandle.current().pid())) {
            int[] fds = channel.allGatherFds(List.of(channel.name()), 0, 0, buffer.exportFd(), timeout);
            buffer.importPeers(0, fds);
            Fds.closeAll(fds);
            assertThatThrownBy(() -> buffer.view(0)).isInstanceOf(NativeException.Unsupported.class)
                    .hasMessageContaining("device memory has no host view; use copyFrom/copyTo");
            float[] in = new float[1000];
            for (int i = 0; i < in.length; i++) {
                in[i] = i * 0.25f;
            }
            buffer.copyIn(NativeBuffer.SELF, 0, in, 0, in.length);
            try (LocalBuffer out = backend.allocateLocal(4000); NativeStream stream = backend.createStream()) {
                assertThat(stream.isDefault()).isFalse();
                buffer.allReduce(Algorithm.ONE_SHOT.code(), DType.FLOAT32.code(), ReduceOp.SUM.code(), 1000, out, stream, timeout);
                buffer.synchronize(stream);
                float[] result = new float[1000];
                out.copyTo(result, 0);
                assertThat(result).containsExactly(in);
            }
        }
    }
}
