package io.symmem.docs;

import java.util.Set;

/**
 * Names of other projects that the docs put in backticks as context. They look like ours (CamelCase,
 * UPPER_CASE) but no symmem class, header or reference can vouch for them, so each is listed here,
 * by owner, rather than loosening the rules of {@link CodeNameRules}. Add a name only after checking
 * it is the other project's.
 */
final class ForeignNames {
    private ForeignNames() {
    }

    /** Classes and types of the JDK, Vert.x, Mutiny, Quarkus/SmallRye, picocli, Kubernetes, PyTorch and JavaCPP. */
    static final Set<String> CLASSES = Set.of(
            // JDK
            "AutoCloseable", "IllegalArgumentException", "IllegalStateException", "OutOfMemoryError", "MemorySegment",
            "System", "Boolean", "Long", "Thread", "ByteBuffer",
            // Vert.x and Mutiny
            "JsonObject", "VertxOptions", "NetSocket", "Uni",
            // SmallRye Config, picocli
            "EnvConfigSource", "CommandLine",
            // Kubernetes (dynamic resource allocation)
            "ResourceClaimTemplate",
            // Quarkus (its start-up phase), Mutiny (a subscription's handle)
            "Application", "Cancellable",
            // Kubernetes (a StatefulSet's podManagementPolicy), PyTorch (torch.cuda.MemPool)
            "OrderedReady", "MemPool",
            // JavaCPP
            "Pointer");

    /** Environment variables of CUDA, NCCL, NVSHMEM, PyTorch, podman and the dynamic loader, named as context. */
    static final Set<String> VARIABLES = Set.of(
            // the dynamic loader
            "LD_LIBRARY_PATH",
            // CUDA
            "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING",
            // NCCL settings symmem neither reads nor sets (the docs say when a user might)
            "NCCL_DEBUG", "NCCL_CUMEM_ENABLE", "NCCL_NVLS_ENABLE", "NCCL_WIN_ENABLE", "NCCL_WIN_COLL_SYMMETRIC",
            // NVSHMEM
            "NVSHMEM_CONF_FILE",
            // PyTorch (TORCH_SYMMMEM is spelt with three Ms by PyTorch)
            "TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "TORCH_SYMMMEM",
            // podman
            "CONTAINERS_CONF",
            // Quarkus's own logging (docs/deploy.md, Logs) and CMake's compiler choice (docs/gpus.md)
            "QUARKUS_LOG_LEVEL", "CMAKE_CUDA_COMPILER");

    /** Constants of the CUDA driver API and NVSHMEM that the docs name; UPPER_CASE but not variables. */
    static final Set<String> CONSTANT_PREFIXES = Set.of("CU_", "NVSHMEMX_");

    /** Single constants of other projects: NCCL's header macro of its library's file name suffix. */
    static final Set<String> CONSTANTS = Set.of("NCCL_SUFFIX");
}
