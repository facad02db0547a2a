package io.symmem.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bad input and missing peers, seen from real rank processes. */
class RankFailuresIT {

    private static Map<String, String> rankEnv(int rank, int world, int masterPort, int httpBase) {
        Map<String, String> env = new HashMap<>();
        env.put("RANK", Integer.toString(rank));
        env.put("WORLD_SIZE", Integer.toString(world));
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", Integer.toString(masterPort));
        env.put("SYMMEM_HTTP_PORT", Integer.toString(httpBase));
        // A rank that cannot start must not keep the others waiting for the default minute.
        env.put("SYMMEM_TIMEOUT_RENDEZVOUS", "30s");
        return env;
    }

    /** Every rank's output, so that a failure shows why a peer went missing. */
    private static String everyOutput(List<RankProcess> ranks) {
        StringBuilder all = new StringBuilder();
        for (int r = 0; r < ranks.size(); r++) {
            all.append("---- rank ").append(r).append(" ----\n").append(ranks.get(r).output());
        }
        return all.toString();
    }

    @Test
    void aRankThatNeverJoinsIsNamedByEveryOtherRankWithinTheTimeout() throws Exception {
        int port = Ports.free();
        int http = Ports.freeBlock(4);
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) { // rank 3 of 4 never starts
                Map<String, String> env = rankEnv(r, 4, port, http);
                env.put("SYMMEM_TIMEOUT_RENDEZVOUS", "4s");
                ranks.add(RankProcess.start("rank" + r, env, "demo"));
            }
            for (int r = 0; r < 3; r++) {
                RankProcess p = ranks.get(r);
                int code = p.exitCode(60);
                assertThat(code).as(p.output()).isEqualTo(1);
                assertThat(p.output()).contains("rank " + r + " FAILED").contains("rank(s) [3]");
                assertThat(p.isAlive()).isFalse();
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void differentBufferSizesGiveAClearErrorOnEveryRank() throws Exception {
        int port = Ports.free();
        int http = Ports.freeBlock(4);
        List<RankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 4; r++) {
                ranks.add(RankProcess.start("rank" + r, rankEnv(r, 4, port, http), "demo", "--sizes", "4KiB",
                        "--bytes-of-rank", "2=8192"));
            }
            for (int r = 0; r < 4; r++) {
                RankProcess p = ranks.get(r);
                assertThat(p.exitCode(90)).as(everyOutput(ranks)).isEqualTo(1);
                assertThat(p.output()).as(everyOutput(ranks)).contains("symmetric buffer sizes differ across the ranks of group 'demo'")
                        .contains("rank 2: 8192 bytes").contains("rank 0: 4096 bytes");
            }
        } finally {
            ranks.forEach(RankProcess::close);
        }
    }

    @Test
    void anInvalidVariableStopsStartUpNamingIt() throws Exception {
        try (RankProcess p = RankProcess.start("bad-rank", Map.of("RANK", "abc", "WORLD_SIZE", "2"), "demo")) {
            assertThat(p.exitCode(60)).isEqualTo(2);
            assertThat(p.output()).contains("RANK=abc is invalid");
        }
        try (RankProcess p = RankProcess.start("bad-backend", Map.of("SYMMEM_BACKEND", "gpu"), "serve")) {
            assertThat(p.exitCode(60)).isEqualTo(2);
            assertThat(p.output()).contains("SYMMEM_BACKEND=gpu is invalid").contains("auto, host, cuda");
        }
    }

    @Test
    void nvshmemWithoutItsLibraryStopsTheRankNamingEveryPlaceLookedAt() throws Exception {
        // This machine has no NVSHMEM (no GPU, no pip wheel): the rank must stop at once, before the world
        // rendezvous, with the list of places and where each came from.
        Map<String, String> env = rankEnv(0, 1, Ports.free(), Ports.freeBlock(1));
        env.put("SYMMEM_BACKEND", "nvshmem");
        env.put("SYMMEM_NVSHMEM_HOME", "/nonexistent/nvshmem");
        try (RankProcess p = RankProcess.start("no-nvshmem", env, "demo")) {
            assertThat(p.exitCode(60)).as(p.output()).isEqualTo(1);
            assertThat(p.output()).contains("SYMMEM_BACKEND=nvshmem: NVSHMEM's host library (libnvshmem_host.so.3) was not found")
                    .contains("/nonexistent/nvshmem/lib/libnvshmem_host.so.3 [SYMMEM_NVSHMEM_HOME")
                    .contains("libnvshmem_host.so.3 [").contains("Set SYMMEM_NVSHMEM_HOME");
        }
    }

    @Test
    void ncclWithoutItsLibraryStopsTheRankNamingEveryPlaceLookedAt() throws Exception {
        // No NCCL here (no GPU, no pip wheel): SYMMEM_BACKEND=nccl must stop the rank before the world
        // rendezvous, with every place looked at and where it came from.
        Map<String, String> env = rankEnv(0, 1, Ports.free(), Ports.freeBlock(1));
        env.put("SYMMEM_BACKEND", "nccl");
        env.put("NCCL_HOME", "/nonexistent/nccl");
        try (RankProcess p = RankProcess.start("no-nccl", env, "demo")) {
            assertThat(p.exitCode(60)).as(p.output()).isEqualTo(1);
            assertThat(p.output()).contains("SYMMEM_BACKEND=nccl: NCCL (libnccl.so.2) not found")
                    .contains("/nonexistent/nccl/lib/libnccl.so.2 [NCCL_HOME]: no such file")
                    .contains("Set SYMMEM_NCCL_LIBRARY");
        }
    }

    @Test
    void aMissingVariableStopsStartUpNamingIt() throws Exception {
        try (RankProcess p = RankProcess.start("no-world", Map.of("RANK", "1"), "demo")) {
            assertThat(p.exitCode(60)).isEqualTo(2);
            assertThat(p.output()).contains("WORLD_SIZE is missing");
        }
    }
}
