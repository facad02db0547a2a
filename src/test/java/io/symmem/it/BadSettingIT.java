package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A bad setting, seen from the packaged application as users start it: on every command that reads
 * it, exit status 2 and exactly one line on stderr naming the variable, nothing on stdout, no stack
 * trace, before anything starts.
 */
class BadSettingIT {

    private static void refused(Map<String, String> env, String expectedLine, String... args) throws Exception {
        try (RankProcess p = RankProcess.startSeparatingStderr("bad-setting", env, args)) {
            int exit = p.exitCode(60);
            String err = p.errors();
            assertThat(exit).as("exit of %s with %s; stderr:%n%s", String.join(" ", args), env, err).isEqualTo(2);
            assertThat(err.lines().toList()).as("stderr of %s with %s", String.join(" ", args), env).hasSize(1);
            assertThat(err).startsWith(expectedLine).doesNotContain("Exception").doesNotContain("\tat ");
            assertThat(p.output()).as("stdout").isEmpty();
        }
    }

    @Test
    void aBooleanThatIsNoneOfTheWordsStopsARank() throws Exception {
        refused(Map.of("SYMMEM_DISABLE_MULTICAST", "maybe"),
                "symmem: SYMMEM_DISABLE_MULTICAST=maybe is invalid: expected true or false (1/0, yes/no, any case)", "serve");
    }

    @Test
    void anEmptyVariableIsAnErrorNotADefault() throws Exception {
        refused(Map.of("RANK", "0", "WORLD_SIZE", "1", "LOCAL_RANK", ""),
                "symmem: LOCAL_RANK= is invalid: empty (set it to an integer", "demo");
    }

    @Test
    void anHttpHostThatIsNoAddressOfThisMachineStopsARankBeforeQuarkus() throws Exception {
        refused(Map.of("SYMMEM_HTTP_HOST", "999.1.1.1"), "symmem: SYMMEM_HTTP_HOST=999.1.1.1 is invalid: expected an address of this machine",
                "serve");
        refused(Map.of("SYMMEM_HTTP_HOST", "192.0.2.1"), "symmem: SYMMEM_HTTP_HOST=192.0.2.1 is invalid: expected an address of this machine",
                "bench", "allreduce");
    }

    @Test
    void anNvshmemInterfaceThatThisHostLacksStopsAnNvshmemRankNamingWhereItCameFrom() throws Exception {
        // NCCL's variable reaches NVSHMEM's as PyTorch copies it; the interface does not exist here.
        refused(Map.of("SYMMEM_BACKEND", "nvshmem", "NCCL_SOCKET_IFNAME", "nosuchif9"),
                "symmem: NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=nosuchif9 (from NCCL_SOCKET_IFNAME) matches no network "
                        + "interface of this host", "serve");
    }

    @Test
    void spinVariablesOutOfRangeStopTheStoreAndItsBenchmark() throws Exception {
        refused(Map.of("SYMMEM_STORE_SERVER_SPIN_MICROS", "-1"),
                "symmem: SYMMEM_STORE_SERVER_SPIN_MICROS=-1 is invalid: expected microseconds, 0..10000", "store");
        refused(Map.of("SYMMEM_STORE_SPIN_MICROS", "99999"),
                "symmem: SYMMEM_STORE_SPIN_MICROS=99999 is invalid: expected microseconds, 0..10000", "bench", "store");
    }

    @Test
    void configStillListsEveryVariableAndNamesTheBadOne() throws Exception {
        try (RankProcess p = RankProcess.startSeparatingStderr("config", Map.of("SYMMEM_DISABLE_MULTICAST", "maybe"), "config")) {
            assertThat(p.exitCode(60)).as(p.output() + p.errors()).isEqualTo(2);
            assertThat(p.output()).containsPattern("SYMMEM_DISABLE_MULTICAST +maybe ")
                    .contains("SYMMEM_STORE_SERVER_SPIN_MICROS").contains("SYMMEM_TIMEOUT_LIVENESS")
                    .contains("SYMMEM_DISABLE_MULTICAST=maybe is invalid");
        }
    }

    @Test
    void configListsTheNativeTunablesAndNamesABadOne() throws Exception {
        try (RankProcess p = RankProcess.startSeparatingStderr("config", Map.of("SYMMEM_CUDA_PDL", "2",
                "SYMMEM_HOST_THREADS", "3"), "config")) {
            assertThat(p.exitCode(60)).as(p.output() + p.errors()).isEqualTo(2);
            assertThat(p.output()).containsPattern("SYMMEM_HOST_THREADS +3 +environment +a whole number in 1\\.\\.1024")
                    .containsPattern("SYMMEM_HOST_TWO_SHOT_MIN_BYTES +\\(default\\) +native host default .*\\(unset: 65536\\)")
                    .contains("SYMMEM_CUDA_TWO_SHOT_IP_MIN_BYTES")
                    .contains("SYMMEM_CUDA_PDL='2' is not valid: a whole number in 0..1")
                    .doesNotContain("configuration is valid");
        }
    }

    @Test
    void aLivenessBoundOutOfRangeStopsARank() throws Exception {
        refused(Map.of("SYMMEM_TIMEOUT_LIVENESS", "100ms"),
                "symmem: SYMMEM_TIMEOUT_LIVENESS=100ms is invalid: expected a duration from 300ms to 10m", "serve");
    }
}
