package io.symmem.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.config.Backend;
import io.symmem.nccl.NcclLibraryCandidates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** /v1/info's nccl section before NCCL is loaded: why not, and where the library would come from. */
class NcclInfoTest {

    @Test
    void notLoadedSaysWhyAndWhereTheLibraryIs(@TempDir Path tmp) throws Exception {
        Path lib = tmp.resolve("nccl/lib/libnccl.so.2");
        Files.createDirectories(lib.getParent());
        Files.writeString(lib, "stand-in");
        NcclLibraryCandidates c = NcclLibraryCandidates.of(Map.of("NCCL_HOME", tmp.resolve("nccl").toString()),
                tmp.resolve("home"), List.of());
        NcclInfo info = NcclInfo.of(Backend.CUDA, null, false, c);
        assertThat(info.status()).startsWith("not loaded: SYMMEM_BACKEND=cuda; auto never chooses nccl");
        assertThat(info.library()).isEqualTo("found at " + lib + " (NCCL_HOME), not loaded");
        assertThat(info.version()).isNull();
        assertThat(info.communicators()).isEmpty();
    }

    @Test
    void notFoundOnDiskLeavesTheSonameToTheLoader(@TempDir Path tmp) {
        NcclLibraryCandidates c = NcclLibraryCandidates.of(Map.of(), tmp.resolve("home"), List.of());
        NcclInfo info = NcclInfo.of(Backend.NCCL, null, false, c);
        assertThat(info.status()).isEqualTo("not loaded yet (SYMMEM_BACKEND=nccl)");
        assertThat(info.library()).isEqualTo("not found on disk; libnccl.so.2 is left to the dynamic loader");
    }
}
