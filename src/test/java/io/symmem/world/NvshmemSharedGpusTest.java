package io.symmem.world;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What NvshmemStartup works out before NVSHMEM runs: which ranks share a GPU (from the world
 * rendezvous: same host, same device), and the not-found message with each place's origin.
 */
class NvshmemSharedGpusTest {
    private static PeerInfo peer(int rank, String host, int device) {
        return new PeerInfo(rank, rank, host, 100 + rank, 8700, "nvshmem", device, "H100", 1);
    }

    @Test
    void theNotFoundMessageSaysWhereEachPlaceCameFrom() {
        String loader = "NVSHMEM's host library (libnvshmem_host.so.3) was not found; looked at:"
                + "\n  /x/lib/libnvshmem_host.so.3: cannot open shared object file"
                + "\n  libnvshmem_host.so.3: cannot open shared object file";
        String shown = NvshmemStartup.withOrigins(loader, List.of(
                new io.symmem.config.LibraryCandidate("/x/lib/libnvshmem_host.so.3", "SYMMEM_NVSHMEM_HOME"),
                new io.symmem.config.LibraryCandidate("libnvshmem_host.so.3", "the loader's search path")));
        assertThat(shown).contains("\n  /x/lib/libnvshmem_host.so.3 [SYMMEM_NVSHMEM_HOME]: cannot open shared object file")
                .contains("\n  libnvshmem_host.so.3 [the loader's search path]: cannot open shared object file");
    }

    @Test
    void oneGpuPerRankIsNotShared() {
        assertThat(NvshmemStartup.sharedGpus(List.of(peer(0, "a", 0), peer(1, "a", 1), peer(2, "b", 0)))).isNull();
    }

    @Test
    void ranksOnTheSameDeviceOfOneHostAreNamed() {
        assertThat(NvshmemStartup.sharedGpus(List.of(peer(0, "a", 0), peer(1, "a", 0), peer(2, "b", 0), peer(3, "b", 0))))
                .isEqualTo("ranks [0, 1] share GPU 0 of host a; ranks [2, 3] share GPU 0 of host b");
    }
}
