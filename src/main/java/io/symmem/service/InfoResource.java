package io.symmem.service;

import io.smallrye.common.annotation.NonBlocking;
import io.symmem.config.SymmemConfig;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

@Path("/v1/info")
public class InfoResource {
    @Inject
    RankRuntime runtime;

    /** This rank, its backend and device, and every peer met at the world rendezvous. */
    @GET
    @NonBlocking
    @Produces(MediaType.APPLICATION_JSON)
    public RankInfo info() {
        SymmemConfig c = runtime.config();
        NativeBackend backend = runtime.backend();
        return new RankInfo(c.rank(), c.worldSize(), c.effectiveLocalRank(), c.effectiveLocalWorldSize(),
                backend == null ? c.backend().id() : backend.name(),
                backend == null ? -1 : backend.device(),
                backend == null ? null : backend.deviceName(),
                runtime.state().name(), runtime.error(), NativeCore.version(), NativeCore.builtWithCuda(),
                NativeCore.cudaDeviceCount(), runtime.storeAddress(), runtime.peers(),
                NvshmemInfo.of(c.backend(), runtime.nvshmem(), System.getenv()),
                NcclInfo.of(c.backend(), runtime.ncclGroups()), runtime.poolFigures());
    }
}
