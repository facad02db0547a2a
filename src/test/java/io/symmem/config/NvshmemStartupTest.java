package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The NVSHMEM variables at start-up: one line naming the variable and where its value came from when
 * it is wrong, and every effective value with its source in `symmem config` / GET /v1/config.
 */
class NvshmemStartupTest {
    private static final List<String> HOST = List.of("lo", "eth0");

    private static List<String> problems(Map<String, String> env) {
        return SymmemConfigLoader.problems(env, new Properties(), () -> HOST);
    }

    private static Map<String, String> nvshmem(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("SYMMEM_BACKEND", "nvshmem"));
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    @Test
    void aCopiedInterfaceListThatMatchesNothingIsOneLineSayingWhereItCameFrom() {
        assertThat(problems(nvshmem("NCCL_SOCKET_IFNAME", "eth9"))).containsExactly(
                "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=eth9 (from NCCL_SOCKET_IFNAME) matches no network interface of this host; "
                        + "interfaces: lo, eth0");
    }

    @Test
    void anExplicitListThatExcludesEveryInterfaceIsRefused() {
        assertThat(problems(nvshmem("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "^lo,eth"))).containsExactly(
                "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=^lo,eth (set in the environment) excludes every network interface of "
                        + "this host; interfaces: lo, eth0");
        assertThat(problems(nvshmem("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "=eth"))).hasSize(1);
    }

    @Test
    void theUsersListIsCheckedNotNcclsItOverrides() {
        assertThat(problems(nvshmem("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "eth", "NCCL_SOCKET_IFNAME", "eth9"))).isEmpty();
        assertThat(problems(nvshmem("NCCL_SOCKET_IFNAME", "^docker,lo"))).isEmpty();
    }

    @Test
    void interfacesAreCheckedOnlyWhereNvshmemRuns() {
        // A cluster-wide NCCL_SOCKET_IFNAME must not stop a host or cuda rank on a machine without that NIC.
        assertThat(problems(Map.of("NCCL_SOCKET_IFNAME", "eth9", "SYMMEM_BACKEND", "host"))).isEmpty();
        assertThat(problems(Map.of("NCCL_SOCKET_IFNAME", "eth9"))).isEmpty();
        // And not at all when the host does not list its interfaces.
        assertThat(SymmemConfigLoader.problems(nvshmem("NCCL_SOCKET_IFNAME", "eth9"), new Properties(), () -> null)).isEmpty();
    }

    @Test
    void badVendorValuesNameTheVariableAndWhatIsAllowed() {
        assertThat(problems(Map.of("NCCL_IB_GID_INDEX", "-1"))).singleElement().asString()
                .startsWith("NCCL_IB_GID_INDEX=-1 is invalid: expected an integer >= 0").contains("(less than 0)");
        assertThat(problems(Map.of("NVSHMEM_IB_GID_INDEX", "03"))).singleElement().asString()
                .startsWith("NVSHMEM_IB_GID_INDEX=03 is invalid").contains("octal");
        assertThat(problems(Map.of("NCCL_SOCKET_IFNAME", ""))).singleElement().asString()
                .startsWith("NCCL_SOCKET_IFNAME= is invalid: empty");
        assertThat(problems(Map.of("NVSHMEM_HCA_LIST", "mlx5_0,,mlx5_1"))).singleElement().asString()
                .contains("(an empty entry)");
        assertThat(problems(Map.of("NVSHMEM_SYMMETRIC_SIZE", "1GB"))).singleElement().asString()
                .startsWith("NVSHMEM_SYMMETRIC_SIZE=1GB is invalid");
        assertThat(problems(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "2G"))).singleElement().asString()
                .startsWith("SYMMEM_NVSHMEM_HEAP_SIZE=2G is invalid").contains("ambiguous");
        assertThat(problems(Map.of("NVSHMEM_DISABLE_NVLS", "off"))).singleElement().asString()
                .startsWith("NVSHMEM_DISABLE_NVLS=off is invalid: expected 1 or 0");
        assertThat(problems(Map.of("SYMMEM_NVSHMEM_HOME", "~/nvshmem"))).singleElement().asString()
                .contains("'~' is not expanded");
    }

    private static EffectiveSetting effective(Map<String, String> env, String variable) {
        return SymmemConfigLoader.effective(env, new Properties()).stream().filter(s -> s.variable().equals(variable))
                .findFirst().orElseThrow();
    }

    @Test
    void configShowsEachNvshmemValueWithItsSource() {
        Map<String, String> env = Map.of("NCCL_SOCKET_IFNAME", "lo", "NCCL_IB_HCA", "mlx5_0");
        assertThat(effective(env, "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME"))
                .extracting(EffectiveSetting::value, EffectiveSetting::source).containsExactly("lo", "from NCCL_SOCKET_IFNAME");
        assertThat(effective(env, "NVSHMEM_ENABLE_NIC_PE_MAPPING").value()).isEqualTo("1");
        assertThat(effective(env, "NVSHMEM_DISABLE_NVLS")).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly("1", "symmem default: NVLink multicast stays off");
        assertThat(effective(env, "NVSHMEM_IB_GID_INDEX").value()).isEqualTo("(unset)");
        assertThat(effective(env, "NCCL_SOCKET_IFNAME").value()).isEqualTo("lo");
        assertThat(effective(Map.of("NVSHMEM_DISABLE_NVLS", "0"), "NVSHMEM_DISABLE_NVLS"))
                .extracting(EffectiveSetting::value, EffectiveSetting::source).containsExactly("0", "EnvConfigSource");
        assertThat(effective(Map.of("NVSHMEM_REMOTE_TRANSPORT", "ibgda"), "NVSHMEM_REMOTE_TRANSPORT"))
                .extracting(EffectiveSetting::value, EffectiveSetting::source).containsExactly("ibgda", "environment");
    }

    @Test
    void theMappingReadsTheValuesNvshmemWillSee() {
        NvshmemConfig c = SymmemConfigLoader.nvshmem(Map.of("NCCL_IB_GID_INDEX", "3", "NCCL_IB_HCA", "mlx5_0",
                "SYMMEM_NVSHMEM_HEAP_SIZE", "2GiB"), new Properties());
        assertThat(c.ibGidIndex()).hasValue(3);
        assertThat(c.hcaList()).contains("mlx5_0");
        assertThat(c.enableNicPeMapping()).contains(true);
        assertThat(c.disableNvls()).isTrue();
        assertThat(c.symmetricSize()).contains(2L << 30);
        assertThat(c.bootstrapUidSockIfname()).isEmpty();

        NvshmemConfig own = SymmemConfigLoader.nvshmem(Map.of("NVSHMEM_DISABLE_NVLS", "false", "NVSHMEM_SYMMETRIC_SIZE", "512m",
                "SYMMEM_NVSHMEM_HEAP_SIZE", "2GiB"), new Properties());
        assertThat(own.disableNvls()).isFalse();
        assertThat(own.symmetricSize()).contains(512L << 20);
        assertThat(SymmemConfigLoader.load(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "2GiB"), new Properties()).nvshmem().heapSize())
                .contains(2L << 30);
    }
}
