package io.symmem.service;

/** What every rank publishes at the world rendezvous, and /v1/info shows. */
public record PeerInfo(int rank, int localRank, String host, long pid, int httpPort, String backend,
        int device, String deviceName) {
}
