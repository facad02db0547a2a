package io.symmem.service;

import io.symmem.memory.PoolFigures;
import io.symmem.world.PeerInfo;
import java.util.List;

/** The body of GET /v1/info. pools: the figures of this rank's memory pools (docs/mempool.md). */
public record RankInfo(int rank, int worldSize, int localRank, int localWorldSize, String backend, int device,
        String deviceName, String state, String error, String version, boolean cudaBuilt, int cudaDevices,
        String store, List<PeerInfo> peers, NvshmemInfo nvshmem, NcclInfo nccl, List<PoolFigures> pools) {
}
