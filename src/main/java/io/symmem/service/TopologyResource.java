package io.symmem.service;

import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeTopology;
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
import java.util.List;

@Path("/v1/topology")
@Tag(name = "rank", description = "This rank, its configuration and its GPUs")
public class TopologyResource {
    @Inject
    RankRuntime runtime;

    /**
     * The body of GET /v1/topology. Matrices are [i][j] over the devices (diagonal 0):
     * canAccessPeer (P2P), performanceRank (cudaDevP2PAttrPerformanceRank; NVLink pairs rank best)
     * and nativeAtomics. Without a GPU: deviceCount 0 and empty lists.
     */
    public record TopologyInfo(int deviceCount, boolean cudaBuilt, boolean multicastDisabled,
            List<NativeTopology.Device> devices, int[][] canAccessPeer, int[][] performanceRank, int[][] nativeAtomics) {
    }

    /** The GPUs this rank's process sees (symmem_cuda_topology), whatever backend it uses. */
    @Operation(summary = "The GPUs this rank's process sees and how they connect")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "no GPU",
            value = "{\"deviceCount\":0,\"cudaBuilt\":true,\"multicastDisabled\":true,\"devices\":[],\"canAccessPeer\":[],\"performanceRank\":[],\"nativeAtomics\":[]}")))
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public TopologyInfo topology() {
        NativeTopology t = NativeTopology.query();
        boolean disabled = runtime.config().disableMulticast()
                || t.devices().stream().anyMatch(d -> d.multicast().equals("disabled"));
        return new TopologyInfo(t.deviceCount(), NativeCore.builtWithCuda(), disabled, t.devices(), t.canAccessPeer(),
                t.performanceRank(), t.nativeAtomics());
    }
}
