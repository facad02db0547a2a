package io.symmem.service.http;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.Components;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.security.SecurityScheme;

/**
 * What the OpenAPI document (/q/openapi, Swagger UI at /q/swagger-ui) says of the API as a whole, and
 * its bearer scheme (the annotations' way of declaring them is not read from an ordinary class). Run
 * once, at build time: a filter that runs at start makes Quarkus parse the stored document and write
 * it out again as JSON and YAML at every start (a quarter of the main thread's time before ready).
 */
@OpenApiFilter(stages = OpenApiFilter.RunStage.BUILD)
public class ApiDocument implements OASFilter {
    static final String SCHEME = "bearer";

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getInfo() == null) {
            openAPI.setInfo(OASFactory.createInfo());
        }
        openAPI.getInfo().title("symmem sidecar").description("Each rank's sidecar answers for its own rank: groups, control-plane "
                + "collectives, NCCL/NVSHMEM bootstrap ids, the world and its events, the rendezvous store. Errors are "
                + "application/problem+json. Health and metrics are on the management port (SYMMEM_MANAGEMENT_PORT + LOCAL_RANK).");
        Components components = openAPI.getComponents() != null ? openAPI.getComponents() : OASFactory.createComponents();
        components.addSecurityScheme(SCHEME, OASFactory.createSecurityScheme().type(SecurityScheme.Type.HTTP).scheme("bearer")
                .description("Only when SYMMEM_API_TOKEN is set on the rank: every /v1 route then needs it"));
        openAPI.setComponents(components);
        openAPI.addSecurityRequirement(OASFactory.createSecurityRequirement().addScheme(SCHEME));
    }
}
