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
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

@Path("/v1/info")
@Tag(name = "rank", description = "This rank, its configuration and its GPUs")
public class InfoResource {
    @Inject
    RankRuntime runtime;

    /** This rank, its backend and device, and every peer met at the world rendezvous. */
    @Operation(summary = "This rank, its backend and device, and every peer met at the world rendezvous")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "rank 1 of 2",
            value = "{\"rank\":1,\"worldSize\":2,\"localRank\":1,\"localWorldSize\":2,\"backend\":\"host\",\"device\":-1,\"deviceName\":\"cpu\",\"state\":\"READY\",\"error\":null,\"version\":\"0.1.0\",\"cudaBuilt\":true,\"cudaDevices\":0,\"store\":\"127.0.0.1:29500\",\"peers\":[{\"rank\":0,\"localRank\":0,\"host\":\"node-a\",\"pid\":4711,\"httpPort\":8700,\"backend\":\"host\",\"device\":-1,\"deviceName\":\"cpu\",\"cudaDeviceCount\":0}],\"nvshmem\":null,\"nccl\":null,\"pools\":[]}")))
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
