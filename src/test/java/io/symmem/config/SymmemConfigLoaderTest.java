package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class SymmemConfigLoaderTest {

    private static SymmemConfig load(Map<String, String> env) {
        return SymmemConfigLoader.load(env, new Properties());
    }

    private static String problem(Map<String, String> env) {
        try {
            load(env);
        } catch (InvalidConfigurationException e) {
            return e.getMessage();
        }
        throw new AssertionError("expected an invalid configuration for " + env);
    }

    @Test
    void defaultsDescribeASingleProcessOnLoopback() {
        SymmemConfig c = load(Map.of());
        assertThat(c.rank()).isZero();
        assertThat(c.worldSize()).isEqualTo(1);
        assertThat(c.effectiveLocalRank()).isZero();
        assertThat(c.masterAddr()).isEqualTo("127.0.0.1");
        assertThat(c.masterPort()).isEqualTo(29500);
        assertThat(c.backend()).isEqualTo(Backend.AUTO);
        assertThat(c.timeout().rendezvous()).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void readsTorchrunAndSymmemVariables() {
        SymmemConfig c = load(Map.of("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4",
                "MASTER_ADDR", "node0", "MASTER_PORT", "1234", "SYMMEM_BACKEND", "host",
                "SYMMEM_TIMEOUT_RENDEZVOUS", "1500ms", "SYMMEM_HTTP_PORT", "9000"));
        assertThat(c.rank()).isEqualTo(3);
        assertThat(c.worldSize()).isEqualTo(8);
        assertThat(c.effectiveLocalRank()).isEqualTo(1);
        assertThat(c.effectiveLocalWorldSize()).isEqualTo(4);
        assertThat(c.masterAddr()).isEqualTo("node0");
        assertThat(c.masterPort()).isEqualTo(1234);
        assertThat(c.backend()).isEqualTo(Backend.HOST);
        assertThat(c.timeout().rendezvous()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.http().port()).isEqualTo(9000);
    }

    @Test
    void localRankDefaultsToRank() {
        SymmemConfig c = load(Map.of("RANK", "2", "WORLD_SIZE", "4"));
        assertThat(c.effectiveLocalRank()).isEqualTo(2);
        assertThat(c.effectiveLocalWorldSize()).isEqualTo(4);
    }

    @Test
    void nonNumericRankNamesTheVariable() {
        assertThat(problem(Map.of("RANK", "abc", "WORLD_SIZE", "4")))
                .contains("RANK=abc is invalid").contains("0 <= RANK < WORLD_SIZE");
    }

    @Test
    void rankOutsideTheWorldNamesBoth() {
        assertThat(problem(Map.of("RANK", "4", "WORLD_SIZE", "4")))
                .contains("RANK=4 is invalid").contains("WORLD_SIZE=4");
    }

    @Test
    void missingWorldSizeIsNamed() {
        assertThat(problem(Map.of("RANK", "1"))).contains("WORLD_SIZE is missing");
        assertThat(problem(Map.of("WORLD_SIZE", "2"))).contains("RANK is missing");
    }

    @Test
    void unknownBackendListsTheAllowedOnes() {
        assertThat(problem(Map.of("SYMMEM_BACKEND", "gpu")))
                .contains("SYMMEM_BACKEND=gpu is invalid").contains("auto, host, cuda, nvshmem, nccl");
    }

    @Test
    void badPortsAndTimeoutsAreNamed() {
        assertThat(problem(Map.of("MASTER_PORT", "70000"))).contains("MASTER_PORT=70000 is invalid");
        assertThat(problem(Map.of("SYMMEM_TIMEOUT_BARRIER", "0s"))).contains("SYMMEM_TIMEOUT_BARRIER");
        assertThat(problem(Map.of("SYMMEM_TIMEOUT_STORE", "soon"))).contains("SYMMEM_TIMEOUT_STORE=soon is invalid");
        assertThat(problem(Map.of("LOCAL_WORLD_SIZE", "3", "RANK", "0", "WORLD_SIZE", "2")))
                .contains("LOCAL_WORLD_SIZE=3 is invalid");
    }

    @Test
    void storeLimitsDefaultToTheStoresAndCanBeRaised() {
        SymmemConfig defaults = load(Map.of());
        assertThat(defaults.store().maxKeyBytes()).isEqualTo(4096);
        assertThat(defaults.store().maxValueBytes()).isEqualTo(64 * 1024 * 1024);
        assertThat(defaults.store().maxKeysPerRequest()).isEqualTo(65536);
        SymmemConfig raised = load(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "1073741824", "SYMMEM_STORE_MAX_KEY_BYTES", "256"));
        assertThat(raised.store().maxValueBytes()).isEqualTo(1 << 30);
        assertThat(raised.store().maxKeyBytes()).isEqualTo(256);
    }

    @Test
    void storeLimitsTakeSizesWithUnits() {
        SymmemConfig c = load(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "64MiB", "SYMMEM_STORE_MAX_KEY_BYTES", "4 KB"));
        assertThat(c.store().maxValueBytes()).isEqualTo(64 << 20);
        assertThat(c.store().maxKeyBytes()).isEqualTo(4000);
        assertThat(load(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "1gib")).store().maxValueBytes()).isEqualTo(1 << 30);
    }

    @Test
    void aSizeBeyondTheIntRangeOrAmbiguousIsRefusedNamingTheVariable() {
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "2GiB")))
                .contains("SYMMEM_STORE_MAX_VALUE_BYTES=2GiB is invalid").contains("more than 2147483647 bytes");
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "64M")))
                .contains("SYMMEM_STORE_MAX_VALUE_BYTES=64M is invalid").contains("ambiguous (64MiB");
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_KEY_BYTES", "2MiB")))
                .contains("SYMMEM_STORE_MAX_KEY_BYTES=2MiB is invalid: expected a size from 1 to 1048576 bytes")
                .contains("(more than 1048576 bytes)");
    }

    @Test
    void storeHostAndRunId() {
        SymmemConfig defaults = load(Map.of());
        assertThat(defaults.store().host()).isEqualTo(StoreHost.RANK0);
        assertThat(defaults.runId()).isEmpty();
        SymmemConfig sidecar = load(Map.of("SYMMEM_STORE_HOST", "symmem", "SYMMEM_RUN_ID", "job-42.a_b"));
        assertThat(sidecar.store().host()).isEqualTo(StoreHost.SYMMEM);
        assertThat(sidecar.runId()).contains("job-42.a_b");
        assertThat(load(Map.of("SYMMEM_STORE_HOST", "tcpstore")).store().host()).isEqualTo(StoreHost.TCPSTORE);
        assertThat(StoreHost.RANK0.hostedBy(0)).isTrue();
        assertThat(StoreHost.RANK0.hostedBy(1)).isFalse();
        assertThat(StoreHost.SYMMEM.hostedBy(0)).isFalse();
    }

    @Test
    void badStoreHostAndRunIdAreNamed() {
        assertThat(problem(Map.of("SYMMEM_STORE_HOST", "redis"))).contains("SYMMEM_STORE_HOST=redis is invalid")
                .contains("rank0").contains("tcpstore");
        assertThat(problem(Map.of("SYMMEM_RUN_ID", "a/b"))).contains("SYMMEM_RUN_ID=a/b is invalid")
                .contains("store key segment");
        assertThat(problem(Map.of("SYMMEM_RUN_ID", "my run"))).contains("SYMMEM_RUN_ID='my run' is invalid");
    }

    @Test
    void badStoreLimitsAreNamed() {
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_KEY_BYTES", "0"))).contains("SYMMEM_STORE_MAX_KEY_BYTES=0 is invalid: expected a size from 1 to")
                .contains("(less than 1 byte)");
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_VALUE_BYTES", "big"))).contains("SYMMEM_STORE_MAX_VALUE_BYTES=big is invalid");
        assertThat(problem(Map.of("SYMMEM_STORE_MAX_KEYS_PER_REQUEST", "99999999"))).contains("SYMMEM_STORE_MAX_KEYS_PER_REQUEST=99999999 is invalid");
    }

    @Test
    void everyBadValueIsReportedAtOnceOneLineEach() {
        InvalidConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                InvalidConfigurationException.class,
                () -> load(Map.of("RANK", "abc", "WORLD_SIZE", "2", "MASTER_PORT", "65536", "SYMMEM_BACKEND", "gpu")));
        assertThat(e.problems()).hasSize(3).allSatisfy(p -> assertThat(p).doesNotContain("\n"));
    }

    @Test
    void onlyTheRankThatHostsTheStoreMayTakeAFreePort() {
        SymmemConfig rank0 = load(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_PORT", "0",
                "SYMMEM_STORE_PORT_FILE", "/tmp/launch/store-port"));
        assertThat(rank0.masterPort()).isZero();
        assertThat(rank0.store().portFile()).contains("/tmp/launch/store-port");
        assertThat(problem(Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_PORT", "0"))).contains(
                "MASTER_PORT=0 is invalid: a free port (0) can only be taken by the rank that hosts the store; this one "
                        + "connects to it (RANK=1, SYMMEM_STORE_HOST=rank0): give the store's port");
        assertThat(problem(Map.of("RANK", "0", "WORLD_SIZE", "2", "MASTER_PORT", "0", "SYMMEM_STORE_HOST", "symmem")))
                .contains("MASTER_PORT=0 is invalid").contains("SYMMEM_STORE_HOST=symmem");
        assertThat(problem(Map.of("SYMMEM_STORE_PORT_FILE", "store-port"))).contains("SYMMEM_STORE_PORT_FILE=store-port is invalid");
    }

    @Test
    void aRankThatConnectsToRankZerosStoreMayReadItsPortFromThePortFile() {
        SymmemConfig rank1 = load(Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_PORT", "0",
                "SYMMEM_STORE_PORT_FILE", "/tmp/launch/store-port"));
        assertThat(rank1.masterPort()).isZero();
        // No rank hosts the store: nobody would ever write the file.
        assertThat(problem(Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_PORT", "0", "SYMMEM_STORE_HOST", "symmem",
                "SYMMEM_STORE_PORT_FILE", "/tmp/launch/store-port"))).contains("MASTER_PORT=0 is invalid");
    }

    @Test
    void relationsAreCheckedTogetherOnceEveryValueIsWellFormed() {
        InvalidConfigurationException e = org.junit.jupiter.api.Assertions.assertThrows(
                InvalidConfigurationException.class,
                () -> load(Map.of("RANK", "3", "WORLD_SIZE", "4", "LOCAL_RANK", "5", "LOCAL_WORLD_SIZE", "4",
                        "SYMMEM_HTTP_PORT", "65535")));
        assertThat(e.problems()).containsExactly(
                "LOCAL_RANK=5 is invalid: must satisfy 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE (LOCAL_WORLD_SIZE=4)",
                "SYMMEM_HTTP_PORT=65535 is invalid: plus LOCAL_RANK (5) must stay within 65535");
    }

    @Test
    void effectiveSettingsNameTheirSource() {
        List<EffectiveSetting> rows = SymmemConfigLoader.effective(Map.of("RANK", "1", "WORLD_SIZE", "2"), new Properties());
        EffectiveSetting rank = rows.stream().filter(r -> r.variable().equals("RANK")).findFirst().orElseThrow();
        assertThat(rank.value()).isEqualTo("1");
        assertThat(rank.source()).contains(TorchrunEnvConfigSource.NAME);
        EffectiveSetting backend = rows.stream().filter(r -> r.variable().equals("SYMMEM_BACKEND")).findFirst().orElseThrow();
        assertThat(backend.source()).isEqualTo("default");
        assertThat(backend.value()).isEqualTo("auto");
        EffectiveSetting localRank = rows.stream().filter(r -> r.variable().equals("LOCAL_RANK")).findFirst().orElseThrow();
        assertThat(localRank.value()).isEqualTo("(derived from RANK)");
    }

    @Test
    void anUnsetVariableWithoutADefaultIsShownUnsetNotDerived() {
        List<EffectiveSetting> rows = SymmemConfigLoader.effective(Map.of(), new Properties());
        for (String name : List.of("SYMMEM_RUN_ID", "SYMMEM_API_TOKEN", "SYMMEM_STORE", "SYMMEM_POOL_LIMIT", "NVSHMEM_DEBUG")) {
            EffectiveSetting row = rows.stream().filter(r -> r.variable().equals(name)).findFirst().orElseThrow();
            assertThat(row.value()).as(name + " is unset, and nothing derives it").isEqualTo("(unset)");
            assertThat(row.source()).as(name).isEqualTo("not set");
        }
        EffectiveSetting localWorldSize = rows.stream().filter(r -> r.variable().equals("LOCAL_WORLD_SIZE")).findFirst().orElseThrow();
        assertThat(localWorldSize.value()).isEqualTo("(derived from WORLD_SIZE)");
        assertThat(localWorldSize.source()).isEqualTo("derived");
    }

    @Test
    void effectiveSettingsStillShowAnInvalidValue() {
        List<EffectiveSetting> rows = SymmemConfigLoader.effective(Map.of("SYMMEM_BACKEND", "gpu"), new Properties());
        EffectiveSetting backend = rows.stream().filter(r -> r.variable().equals("SYMMEM_BACKEND")).findFirst().orElseThrow();
        assertThat(backend.value()).isEqualTo("gpu");
        assertThat(backend.source()).isNotEqualTo("default");
    }

    @Test
    void systemPropertiesWinOverTheEnvironment() {
        Properties props = new Properties();
        props.setProperty("symmem.backend", "host");
        assertThat(SymmemConfigLoader.load(Map.of("SYMMEM_BACKEND", "cuda"), props).backend()).isEqualTo(Backend.HOST);
    }

    @Test
    void rejectsAnInvalidValueWithoutThrowingSomethingElse() {
        assertThatThrownBy(() -> load(Map.of("WORLD_SIZE", "0", "RANK", "0")))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("WORLD_SIZE=0 is invalid");
    }
}
