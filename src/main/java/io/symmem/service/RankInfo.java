package io.symmem.service;

import java.util.List;

/** The body of GET /v1/info. */
public record RankInfo(int rank, int worldSize, int localRank, int localWorldSize, String backend, int device,
        String deviceName, String state, String error, String version, boolean cudaBuilt, int cudaDevices,
        String store, List<PeerInfo> peers, NvshmemInfo nvshmem, NcclInfo nccl) {
}
