package io.symmem.world;

/**
 * What every rank publishes at the world rendezvous, and /v1/info shows. cudaDeviceCount: CUDA
 * devices this rank's process sees (it decides SYMMEM_BACKEND=auto on every rank alike).
 */
public record PeerInfo(int rank, int localRank, String host, long pid, int httpPort, String backend,
        int device, String deviceName, int cudaDeviceCount) {

    PeerInfo withBackend(String backend, int device, String deviceName) {
        return new PeerInfo(rank, localRank, host, pid, httpPort, backend, device, deviceName, cudaDeviceCount);
    }
}
