package io.symmem.config;

import java.util.List;
import java.util.Optional;

/**
 * Start-up check of the interface list NVSHMEM's bootstrap will use, whether the user set it or it
 * came from NCCL_SOCKET_IFNAME: a list that leaves no interface of this host would otherwise surface
 * as a bootstrap hang or a terse NVSHMEM error on some rank, long after start-up.
 */
final class NvshmemInterfaceCheck {
    private NvshmemInterfaceCheck() {
    }

    /** Why the effective list selects no interface among {@code interfaces}; empty when it selects one. */
    static Optional<String> problem(NvshmemEnvironment nvshmem, List<String> interfaces) {
        Optional<EffectiveSetting> setting = nvshmem.setting(ConfigVariable.NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME);
        if (setting.isEmpty() || interfaces == null) {
            return Optional.empty();
        }
        EffectiveSetting s = setting.get();
        InterfaceSpec spec = InterfaceSpec.parse(s.value());
        if (!spec.selected(interfaces).isEmpty()) {
            return Optional.empty();
        }
        String origin = s.source().equals(NvshmemEnvironment.ENVIRONMENT) ? "set in the environment" : s.source();
        return Optional.of(s.variable() + "=" + ConfigVariable.shown(s.value()) + " (" + origin + ") "
                + (spec.exclude() ? "excludes every" : "matches no") + " network interface of this host; interfaces: "
                + (interfaces.isEmpty() ? "none" : String.join(", ", interfaces)));
    }
}
