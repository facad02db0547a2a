package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Two `symmem launch` runs on one machine: the second takes free blocks, or stops at once naming the taken port. */
class PortBlocksTest {
    private static PortBlocks taken(int ranks, Set<Integer> ports) {
        return new PortBlocks(ranks, (host, port) -> !ports.contains(port));
    }

    @Test
    void freeDefaultBlocksAreKept() throws Exception {
        PortBlocks blocks = taken(4, Set.of());
        assertThat(blocks.http(Map.of())).isEqualTo(new PortBlocks.Block("SYMMEM_HTTP_PORT", 8700, false));
        assertThat(blocks.management(Map.of())).contains(new PortBlocks.Block("SYMMEM_MANAGEMENT_PORT", 9700, false));
    }

    @Test
    void aSecondLaunchMovesPastTheBlocksTheFirstHolds() throws Exception {
        // The first launch's 4 ranks hold 8700..8703 and 9700..9703.
        PortBlocks blocks = taken(4, Set.of(8700, 8701, 8702, 8703, 9700, 9701, 9702, 9703));
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        Map<String, String> env = blocks.rankEnvironment(Map.of(), new PrintStream(said, true, StandardCharsets.UTF_8));
        assertThat(env).containsEntry("SYMMEM_HTTP_PORT", "8704").containsEntry("SYMMEM_MANAGEMENT_PORT", "9704");
        assertThat(said.toString(StandardCharsets.UTF_8)).contains("the ranks use 8704..8707 (SYMMEM_HTTP_PORT=8704)");
    }

    @Test
    void aBlockOverlappingATakenPortMovesWhole() throws Exception {
        assertThat(taken(2, Set.of(8701, 8702)).http(Map.of()).base()).isEqualTo(8704);
    }

    @Test
    void aTakenPortOfABlockTheUserSetStopsTheLaunchNamingIt() {
        PortBlocks blocks = taken(4, Set.of(8802));
        assertThatThrownBy(() -> blocks.http(Map.of("SYMMEM_HTTP_PORT", "8800")))
                .isInstanceOf(PortBlocks.PortTakenException.class)
                .hasMessageContaining("port 8802 on 127.0.0.1 is taken (SYMMEM_HTTP_PORT=8800 + LOCAL_RANK 2)")
                .hasMessageContaining("set SYMMEM_HTTP_PORT to a block of 4 free ports");
    }

    @Test
    void managementPortZeroIsEveryRanksOwnFreePort() throws Exception {
        assertThat(taken(4, Set.of(9700)).management(Map.of("SYMMEM_MANAGEMENT_PORT", "0"))).isEmpty();
    }

    @Test
    void aPortHeldByARealSocketIsSeenTaken() throws Exception {
        try (ServerSocket held = new ServerSocket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            assertThat(PortBlocks.bindable("127.0.0.1", port)).isFalse();
            assertThatThrownBy(() -> new PortBlocks(1).http(Map.of("SYMMEM_HTTP_PORT", Integer.toString(port))))
                    .hasMessageContaining("port " + port + " on 127.0.0.1 is taken");
        }
    }

    @Test
    void aTakenStorePortGivenToLaunchStopsItAtOnce() {
        PortBlocks blocks = taken(2, Set.of(29500));
        assertThatThrownBy(() -> blocks.checkStorePort(Map.of(), "127.0.0.1", 29500))
                .hasMessageContaining("the store's port 29500 on 127.0.0.1 is taken (--master-port 29500");
    }

    @Test
    void theStorePortIsNotCheckedWhereRankZeroDoesNotBindIt() throws Exception {
        PortBlocks blocks = taken(2, Set.of(29500));
        blocks.checkStorePort(Map.of(), "127.0.0.1", 0);
        blocks.checkStorePort(Map.of("SYMMEM_STORE_HOST", "symmem"), "127.0.0.1", 29500);
        blocks.checkStorePort(Map.of("SYMMEM_STORE", "etcd://127.0.0.1:2379/job"), "127.0.0.1", 29500);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void launchStopsBeforeStartingAnyRankWhenASetPortIsTaken() throws Exception {
        try (ServerSocket held = new ServerSocket()) {
            held.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = held.getLocalPort();
            ByteArrayOutputStream said = new ByteArrayOutputStream();
            LocalLauncher launcher = new LocalLauncher(2, "127.0.0.1", 0, Duration.ofSeconds(1),
                    new PrintStream(said, true, StandardCharsets.UTF_8), Map.of("SYMMEM_HTTP_PORT", Integer.toString(port)));
            assertThat(launcher.run(List.of("demo"))).isEqualTo(io.symmem.cli.common.ExitStatus.CONFIG);
            assertThat(said.toString(StandardCharsets.UTF_8)).contains("port " + port + " on 127.0.0.1 is taken")
                    .contains("no rank was started").doesNotContain("[0]");
        }
    }
}
