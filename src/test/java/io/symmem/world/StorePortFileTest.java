package io.symmem.world;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.config.SymmemConfig;
import io.symmem.config.SymmemConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The port the hosting rank publishes (SYMMEM_STORE_PORT_FILE) appears whole, or not at all; a rank started
 * with MASTER_PORT=0 beside it reads it once it is there.
 */
class StorePortFileTest {
    @TempDir
    Path dir;

    @Test
    void thePortIsWrittenWholeAndNothingElseIsLeft() throws Exception {
        Path file = dir.resolve("store-port");
        StoreConnector.publishPort(file, 41234);
        assertThat(Files.readString(file).trim()).isEqualTo("41234");
        try (var left = Files.list(dir)) {
            assertThat(left).containsExactly(file);
        }
    }

    @Test
    void aSecondPublicationReplacesTheFirst() throws Exception {
        Path file = dir.resolve("store-port");
        StoreConnector.publishPort(file, 1);
        StoreConnector.publishPort(file, 2);
        assertThat(Files.readString(file).trim()).isEqualTo("2");
    }

    private StoreConnector rank1ReadingPortFrom(Path file) {
        SymmemConfig config = SymmemConfigLoader.load(Map.of("RANK", "1", "WORLD_SIZE", "2", "MASTER_PORT", "0",
                "SYMMEM_STORE_PORT_FILE", file.toString()), new Properties());
        return new StoreConnector(config, null);
    }

    @Test
    void aRankStartedBesideRankZeroReadsThePortOnceItIsPublished() throws Exception {
        Path file = dir.resolve("store-port");
        StoreConnector connector = rank1ReadingPortFrom(file);
        Thread rank0 = new Thread(() -> {
            try {
                Thread.sleep(100);
                StoreConnector.publishPort(file, 41235);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        rank0.start();
        connector.awaitPublishedPort(Duration.ofSeconds(10));
        rank0.join();
        assertThat(connector.port()).isEqualTo(41235);
    }

    @Test
    void aPortNeverPublishedEndsTheWaitAtTheDeadlineNamingTheFile() {
        Path file = dir.resolve("store-port");
        StoreConnector connector = rank1ReadingPortFrom(file);
        assertThatThrownBy(() -> connector.awaitPublishedPort(Duration.ofMillis(200)))
                .hasMessageContaining("SYMMEM_STORE_PORT_FILE=" + file).hasMessageContaining("is rank 0 running?");
    }
}
