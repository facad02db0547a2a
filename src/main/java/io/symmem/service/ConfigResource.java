package io.symmem.service;

import io.smallrye.common.annotation.NonBlocking;
import io.symmem.config.EffectiveSetting;
import io.symmem.config.SymmemConfigLoader;
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

@Path("/v1/config")
@Tag(name = "rank", description = "This rank, its configuration and its GPUs")
public class ConfigResource {
    /** Every variable symmem reads, its value and the source that set it. */
    @Operation(summary = "Every variable symmem reads, its value and the source that set it (a secret only by its length)")
    @APIResponse(responseCode = "200", content = @Content(mediaType = MediaType.APPLICATION_JSON, examples = @ExampleObject(name = "two rows",
            value = "[{\"variable\":\"RANK\",\"property\":\"symmem.rank\",\"value\":\"0\",\"source\":\"EnvConfigSource\",\"allowed\":\"an integer with 0 <= RANK < WORLD_SIZE\"},{\"variable\":\"SYMMEM_API_TOKEN\",\"property\":\"symmem.api.token\",\"value\":\"(set, 32 characters)\",\"source\":\"EnvConfigSource\",\"allowed\":\"...\"}]")))
    @GET
    @NonBlocking
    @Produces(MediaType.APPLICATION_JSON)
    public List<EffectiveSetting> effective() {
        return SymmemConfigLoader.effective(System.getenv(), System.getProperties());
    }
}
