package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The NVSHMEM environment: each fallback, each precedence rule, and what is exported. */
class NvshmemEnvironmentTest {

    private static EffectiveSetting row(NvshmemEnvironment nvshmem, String variable) {
        return nvshmem.settings().stream().filter(s -> s.variable().equals(variable)).findFirst()
                .orElseThrow(() -> new AssertionError(variable + " not in " + nvshmem.settings()));
    }

    @Test
    void withNothingSetOnlyNvlsAndTheLocalProxyAreTurnedOff() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("PATH", "/usr/bin"));
        assertThat(nvshmem.toExport()).containsExactly(Map.entry("NVSHMEM_DISABLE_NVLS", "1"),
                Map.entry("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "1"));
        assertThat(nvshmem.settings()).extracting(EffectiveSetting::variable)
                .containsExactly("NVSHMEM_DISABLE_NVLS", "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY");
        assertThat(row(nvshmem, "NVSHMEM_DISABLE_NVLS").source()).isEqualTo("symmem default: NVLink multicast stays off");
        assertThat(row(nvshmem, "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY").source()).contains("no proxy thread");
    }

    @ParameterizedTest
    @CsvSource({
        "NCCL_SOCKET_IFNAME, NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME, '^docker,lo'",
        "NCCL_SOCKET_IFNAME, NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME, =eth0",
        "NCCL_IB_HCA, NVSHMEM_HCA_LIST, '=mlx5_0:1,mlx5_1'",
        "NCCL_IB_GID_INDEX, NVSHMEM_IB_GID_INDEX, 3"})
    void anUnsetNvshmemVariableTakesNcclsValueVerbatim(String nccl, String nvshmemName, String value) {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of(nccl, value));
        assertThat(nvshmem.toExport()).containsEntry(nvshmemName, value);
        assertThat(row(nvshmem, nvshmemName)).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly(value, "from " + nccl);
    }

    @ParameterizedTest
    @CsvSource({
        "NCCL_SOCKET_IFNAME, eth0, NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME, ib0",
        "NCCL_IB_HCA, mlx5_0, NVSHMEM_HCA_LIST, mlx5_3",
        "NCCL_IB_GID_INDEX, 3, NVSHMEM_IB_GID_INDEX, 0"})
    void anNvshmemVariableTheUserSetWinsOverNccl(String nccl, String ncclValue, String nvshmemName, String own) {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of(nccl, ncclValue, nvshmemName, own));
        assertThat(nvshmem.toExport()).doesNotContainKey(nvshmemName);
        assertThat(row(nvshmem, nvshmemName)).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly(own, "environment");
    }

    @Test
    void aCopiedHcaListTurnsNicMappingOnSinceNvshmemIgnoresTheListOtherwise() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("NCCL_IB_HCA", "mlx5_0,mlx5_1"));
        assertThat(nvshmem.toExport()).containsEntry("NVSHMEM_HCA_LIST", "mlx5_0,mlx5_1")
                .containsEntry("NVSHMEM_ENABLE_NIC_PE_MAPPING", "1");
        assertThat(row(nvshmem, "NVSHMEM_ENABLE_NIC_PE_MAPPING").source()).contains("NCCL_IB_HCA");
    }

    @Test
    void nicMappingTheUserSetWinsEvenWithACopiedList() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("NCCL_IB_HCA", "mlx5_0", "NVSHMEM_ENABLE_NIC_PE_MAPPING", "0"));
        assertThat(nvshmem.toExport()).containsEntry("NVSHMEM_HCA_LIST", "mlx5_0").doesNotContainKey("NVSHMEM_ENABLE_NIC_PE_MAPPING");
        assertThat(row(nvshmem, "NVSHMEM_ENABLE_NIC_PE_MAPPING")).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly("0", "environment");
    }

    @Test
    void anHcaListTheUserSetLeavesNicMappingToThem() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("NVSHMEM_HCA_LIST", "mlx5_0", "NCCL_IB_HCA", "mlx5_1"));
        assertThat(nvshmem.toExport()).doesNotContainKeys("NVSHMEM_HCA_LIST", "NVSHMEM_ENABLE_NIC_PE_MAPPING");
        assertThat(nvshmem.settings()).extracting(EffectiveSetting::variable).doesNotContain("NVSHMEM_ENABLE_NIC_PE_MAPPING");
    }

    @Test
    void nvlsTheUserTurnedOnIsReportedAsTheirs() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("NVSHMEM_DISABLE_NVLS", "0",
                "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "0"));
        assertThat(nvshmem.toExport()).isEmpty();
        assertThat(row(nvshmem, "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY").source()).isEqualTo("environment");
        assertThat(row(nvshmem, "NVSHMEM_DISABLE_NVLS")).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly("0", "environment");
    }

    @Test
    void heapSizeIsExportedInBytesUnlessNvshmemsOwnIsSet() {
        NvshmemEnvironment derived = NvshmemEnvironment.resolve(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "2GiB"));
        assertThat(derived.toExport()).containsEntry("NVSHMEM_SYMMETRIC_SIZE", "2147483648");
        assertThat(row(derived, "NVSHMEM_SYMMETRIC_SIZE").source()).isEqualTo("from SYMMEM_NVSHMEM_HEAP_SIZE=2GiB");
        assertThat(NvshmemEnvironment.resolve(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "1GB")).toExport())
                .containsEntry("NVSHMEM_SYMMETRIC_SIZE", "1000000000");

        NvshmemEnvironment own = NvshmemEnvironment.resolve(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "2GiB", "NVSHMEM_SYMMETRIC_SIZE", "512M"));
        assertThat(own.toExport()).doesNotContainKey("NVSHMEM_SYMMETRIC_SIZE");
        assertThat(row(own, "NVSHMEM_SYMMETRIC_SIZE")).extracting(EffectiveSetting::value, EffectiveSetting::source)
                .containsExactly("512M", "environment");
    }

    @Test
    void anInvalidHeapSizeDerivesNothing() {
        // Start-up refuses it, naming SYMMEM_NVSHMEM_HEAP_SIZE; nothing half-read may reach NVSHMEM meanwhile.
        assertThat(NvshmemEnvironment.resolve(Map.of("SYMMEM_NVSHMEM_HEAP_SIZE", "2G")).toExport())
                .doesNotContainKey("NVSHMEM_SYMMETRIC_SIZE");
    }

    @Test
    void otherNvshmemVariablesAreListedAsSetAndNeverExported() {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(Map.of("NVSHMEM_REMOTE_TRANSPORT", "ibgda", "NVSHMEM_DEBUG", "INFO"));
        assertThat(nvshmem.settings()).extracting(EffectiveSetting::variable)
                .containsExactly("NVSHMEM_DISABLE_NVLS", "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "NVSHMEM_DEBUG",
                        "NVSHMEM_REMOTE_TRANSPORT");
        assertThat(row(nvshmem, "NVSHMEM_REMOTE_TRANSPORT").allowed()).contains("not checked by symmem");
        assertThat(nvshmem.toExport()).containsOnlyKeys("NVSHMEM_DISABLE_NVLS", "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY");
    }

    private static final List<String> NAMES = List.of("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX",
            "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "NVSHMEM_HCA_LIST", "NVSHMEM_IB_GID_INDEX", "NVSHMEM_ENABLE_NIC_PE_MAPPING",
            "NVSHMEM_DISABLE_NVLS", "NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "NVSHMEM_SYMMETRIC_SIZE", "SYMMEM_NVSHMEM_HEAP_SIZE",
            "NVSHMEM_DEBUG", "NVSHMEM_OTHER");

    @Provide
    Arbitrary<Map<String, String>> environments() {
        Arbitrary<String> values = Arbitraries.of("", "0", "1", "eth0", "^lo", "=mlx5_0:1", "2GiB", "512M", "x y");
        return Arbitraries.maps(Arbitraries.of(NAMES), values).ofMaxSize(NAMES.size());
    }

    @Property(tries = 500)
    void nothingTheUserSetIsEverExportedOrOverridden(@ForAll("environments") Map<String, String> env) {
        NvshmemEnvironment nvshmem = NvshmemEnvironment.resolve(env);
        assertThat(nvshmem.toExport().keySet()).allSatisfy(name -> assertThat(env).doesNotContainKey(name))
                .allSatisfy(name -> assertThat(name).startsWith("NVSHMEM_"));
        Map<String, String> shown = new HashMap<>();
        nvshmem.settings().forEach(s -> shown.put(s.variable(), s.value()));
        env.forEach((name, value) -> {
            if (name.startsWith("NVSHMEM_")) {
                assertThat(shown).containsEntry(name, value);
                assertThat(row(nvshmem, name).source()).isEqualTo("environment");
            }
        });
        // What NVSHMEM will see is exactly the environment plus the exports.
        Map<String, String> seen = new HashMap<>(toNvshmem(env));
        seen.putAll(nvshmem.toExport());
        assertThat(shown).isEqualTo(seen);
        assertThat(NvshmemEnvironment.resolve(env).toExport()).isEqualTo(nvshmem.toExport());
    }

    private static Map<String, String> toNvshmem(Map<String, String> env) {
        Map<String, String> nvshmem = new HashMap<>();
        env.forEach((name, value) -> {
            if (name.startsWith("NVSHMEM_")) {
                nvshmem.put(name, value);
            }
        });
        return nvshmem;
    }

    @Property(tries = 200)
    void aCopyIsTakenExactlyWhenTheNvshmemVariableIsUnset(@ForAll("environments") Map<String, String> env) {
        Map<String, String> export = NvshmemEnvironment.resolve(env).toExport();
        for (String[] pair : new String[][] {{"NCCL_SOCKET_IFNAME", "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME"},
                {"NCCL_IB_HCA", "NVSHMEM_HCA_LIST"}, {"NCCL_IB_GID_INDEX", "NVSHMEM_IB_GID_INDEX"}}) {
            boolean copied = env.containsKey(pair[0]) && !env.containsKey(pair[1]);
            assertThat(export.containsKey(pair[1])).as("%s from %s in %s", pair[1], pair[0], env).isEqualTo(copied);
            if (copied) {
                assertThat(export.get(pair[1])).isEqualTo(env.get(pair[0]));
            }
        }
        assertThat(export.containsKey("NVSHMEM_DISABLE_NVLS")).isEqualTo(!env.containsKey("NVSHMEM_DISABLE_NVLS"));
        assertThat(export.containsKey("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY"))
                .isEqualTo(!env.containsKey("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY"));
        assertThat(export.keySet()).isSubsetOf(Set.copyOf(NAMES));
    }
}
