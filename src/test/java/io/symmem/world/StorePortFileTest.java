package io.symmem.world;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The port the hosting rank publishes for a launcher (SYMMEM_STORE_PORT_FILE) appears whole, or not at all. */
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
}
