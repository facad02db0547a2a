package io.symmem.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which ranks share a GPU is read off the world rendezvous: same host and same device. */
class NvshmemSharedGpusTest {
    private static PeerInfo peer(int rank, String host, int device) {
        return new PeerInfo(rank, rank, host, 100 + rank, 8700, "nvshmem", device, "H100", 1);
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
