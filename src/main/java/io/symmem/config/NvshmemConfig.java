package io.symmem.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithName;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The NVSHMEM variables in effect, as NVSHMEM will read them: the user's, else the values
 * {@link NvshmemEnvironment} derives (through {@link NvshmemConfigSourceFactory}). Empty means that
 * NVSHMEM's own default applies. Each value was checked by {@link ConfigVariable} before this is read.
 */
@ConfigMapping(prefix = "nvshmem")
public interface NvshmemConfig {

    /** NVSHMEM_HOME: an NVSHMEM installation, searched after SYMMEM_NVSHMEM_HOME. */
    Optional<String> home();

    /** NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME, or NCCL_SOCKET_IFNAME's value. */
    @WithName("bootstrap-uid-sock-ifname")
    Optional<String> bootstrapUidSockIfname();

    /** NVSHMEM_HCA_LIST, or NCCL_IB_HCA's value. */
    @WithName("hca-list")
    Optional<String> hcaList();

    /** NVSHMEM_ENABLE_NIC_PE_MAPPING; true when the HCA list came from NCCL_IB_HCA. */
    @WithName("enable-nic-pe-mapping")
    @WithConverter(BooleanKind.Converter.class)
    Optional<Boolean> enableNicPeMapping();

    /** NVSHMEM_IB_GID_INDEX, or NCCL_IB_GID_INDEX's value. */
    @WithName("ib-gid-index")
    OptionalInt ibGidIndex();

    /** NVSHMEM_DISABLE_NVLS; true unless the user set it otherwise. */
    @WithName("disable-nvls")
    @WithConverter(BooleanKind.Converter.class)
    boolean disableNvls();

    /** NVSHMEM_DISABLE_LOCAL_ONLY_PROXY; true unless the user set it otherwise. */
    @WithName("disable-local-only-proxy")
    @WithConverter(BooleanKind.Converter.class)
    boolean disableLocalOnlyProxy();

    /** NVSHMEM_SYMMETRIC_SIZE in bytes, or SYMMEM_NVSHMEM_HEAP_SIZE's; empty: NVSHMEM's 1 GiB per rank. */
    @WithName("symmetric-size")
    @WithConverter(ShmemSizeKind.Converter.class)
    Optional<Long> symmetricSize();
}
