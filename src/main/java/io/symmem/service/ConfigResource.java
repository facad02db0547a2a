package io.symmem.service;

import io.smallrye.common.annotation.NonBlocking;
import io.symmem.config.EffectiveSetting;
import io.symmem.config.SymmemConfigLoader;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.List;

@Path("/v1/config")
public class ConfigResource {
    /** Every variable symmem reads, its value and the source that set it. */
    @GET
    @NonBlocking
    @Produces(MediaType.APPLICATION_JSON)
    public List<EffectiveSetting> effective() {
        return SymmemConfigLoader.effective(System.getenv(), System.getProperties());
    }
}
