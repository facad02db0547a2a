package io.symmem.world;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.config.Backend;
import io.symmem.nativ.NativeCore;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** SYMMEM_BACKEND: the device a rank takes, the auto decision every rank takes alike, cuda's errors. */
class BackendSelectorTest {
    private static PeerInfo peer(int rank, int localRank, int device, int count) {
        return new PeerInfo(rank, localRank, "h", 1, 8700, "auto", device, device >= 0 ? "GPU" : null, count);
    }

    @Test
    void deviceFollowsLocalRankOrWrapsOnlyWhenAllowed() {
        assertThat(BackendSelector.deviceFor(2, 4, false)).isEqualTo(2);
        assertThat(BackendSelector.deviceFor(5, 4, false)).isEqualTo(-1);
        assertThat(BackendSelector.deviceFor(5, 4, true)).isEqualTo(1);
        assertThat(BackendSelector.deviceFor(0, 0, true)).isEqualTo(-1);
    }

    @Test
    void autoIsCudaOnlyWhenEveryRankHasADevice() {
        assertThat(BackendSelector.autoFallbackReason(List.of(peer(0, 0, 0, 4), peer(1, 1, 1, 4)))).isNull();
        String reason = BackendSelector.autoFallbackReason(List.of(peer(0, 0, 0, 4), peer(1, 1, -1, 0), peer(2, 5, -1, 4)));
        assertThat(reason).contains("rank 1 sees no CUDA device")
                .contains("rank 2 has LOCAL_RANK 5 but sees only 4 CUDA device(s)");
    }

    @Test
    void cudaWithoutADeviceFailsNamingTheVariable() {
        if (NativeCore.cudaDeviceCount() > 0) {
            System.out.println("SKIPPED: this machine has a CUDA device (cudaWithoutADeviceFailsNamingTheVariable)");
            Assumptions.abort("this machine has a CUDA device");
        }
        assertThatThrownBy(() -> BackendSelector.openExplicit(Backend.CUDA, 0, false))
                .hasMessageContaining("SYMMEM_BACKEND=cuda");
        assertThat(BackendSelector.openExplicit(Backend.HOST, 3, false).name()).isEqualTo("host");
    }

    @Test
    void nvshmemIsNotOpenedBeforeNvshmemIsJoined() {
        // The nvshmem backend needs NVSHMEM joined through the store first (RankRuntime does both).
        assertThatThrownBy(() -> BackendSelector.openExplicit(Backend.NVSHMEM, 0, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NVSHMEM");
    }

    @Test
    void ncclIsNotOpenedBeforeNcclIsLoaded() {
        assertThatThrownBy(() -> BackendSelector.openExplicit(Backend.NCCL, 0, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NCCL");
    }

    @Test
    void ncclGivesEveryRankItsOwnGpuOrSaysWhyNot() {
        assertThat(BackendSelector.ncclDevice(1, 2, false)).isEqualTo(1);
        // No GPU seen: the backend's own open says "no CUDA device", not this check.
        assertThat(BackendSelector.ncclDevice(3, 0, false)).isEqualTo(3);
        assertThatThrownBy(() -> BackendSelector.ncclDevice(2, 2, true))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("LOCAL_RANK 2 has no GPU of its own")
                .hasMessageContaining("NCCL refuses two ranks on one GPU")
                .hasMessageContaining("SYMMEM_ALLOW_OVERLAPPING_DEVICES does not apply to nccl");
    }
}
