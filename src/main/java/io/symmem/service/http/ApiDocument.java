package io.symmem.service.http;

import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;

/** What the OpenAPI document (/q/openapi, Swagger UI at /q/swagger-ui) says of the API as a whole. */
@OpenAPIDefinition(
        info = @Info(title = "symmem sidecar", version = "v1", description = "Each rank's sidecar answers for its own rank: groups, "
                + "control-plane collectives, NCCL/NVSHMEM bootstrap ids, the world and its events, the rendezvous store. Errors are "
                + "application/problem+json. Health and metrics are on the management port (SYMMEM_MANAGEMENT_PORT + LOCAL_RANK)."),
        security = @SecurityRequirement(name = "bearer"),
        components = @Components(securitySchemes = @SecurityScheme(securitySchemeName = "bearer", type = SecuritySchemeType.HTTP,
                scheme = "bearer", description = "Only when SYMMEM_API_TOKEN is set on the rank: every /v1 route then needs it")))
public final class ApiDocument {
    private ApiDocument() {
    }
}
