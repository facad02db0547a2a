package io.symmem.config;

import java.util.Locale;

/** Who serves the world's rendezvous store at MASTER_ADDR:MASTER_PORT. */
public enum StoreHost {
    /** Rank 0 hosts it in its own process (the default, as torchrun's rank 0 does). */
    RANK0,
    /** A separate `symmem store` process (a sidecar): every rank, rank 0 included, connects to it. */
    SYMMEM,
    /**
     * Any TCPStore-protocol server, PyTorch's included (e.g. the one a torch job already runs): every
     * rank connects to it, without the WAIT+GET pipelining only symmem's server allows.
     */
    TCPSTORE;

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** True when this process must host the store itself. */
    public boolean hostedBy(int rank) {
        return this == RANK0 && rank == 0;
    }
}
