package io.symmem.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NcclLibraryCandidatesTest {

    @TempDir
    Path tmp;

    private Path wheel(Path prefix, String python) throws IOException {
        Path lib = prefix.resolve("lib").resolve(python).resolve("site-packages/nvidia/nccl/lib/libnccl.so.2");
        Files.createDirectories(lib.getParent());
        Files.writeString(lib, "not really a library");
        return lib;
    }

    private Path python(Path bin) throws IOException {
        Files.createDirectories(bin);
        Path exe = bin.resolve("python3");
        Files.writeString(exe, "#!/bin/sh\n");
        Files.setPosixFilePermissions(exe, PosixFilePermissions.fromString("rwxr-xr-x"));
        return exe;
    }

    private NcclLibraryCandidates of(Map<String, String> env) {
        return NcclLibraryCandidates.of(env, tmp.resolve("home"), List.of(tmp.resolve("usr-local-lib")));
    }

    @Test
    void theExplicitLibraryIsTheOnlyCandidate() throws IOException {
        Path venv = tmp.resolve("venv");
        wheel(venv, "python3.12");
        Path mine = tmp.resolve("mine/libnccl.so.2");
        Files.createDirectories(mine.getParent());
        Files.writeString(mine, "x");
        NcclLibraryCandidates c = of(Map.of("SYMMEM_NCCL_LIBRARY", mine.toString(), "VIRTUAL_ENV", venv.toString()));
        assertThat(c.paths()).containsExactly(mine.toString());
        assertThat(c.places()).hasSize(1);
    }

    @Test
    void aMissingExplicitLibraryIsNotHandedToTheLoaderAndIsNamed() {
        String missing = tmp.resolve("nope/libnccl.so.2").toString();
        NcclLibraryCandidates c = of(Map.of("SYMMEM_NCCL_LIBRARY", missing));
        assertThat(c.paths()).isEmpty();
        assertThat(c.notFoundMessage(null)).contains(missing + " [SYMMEM_NCCL_LIBRARY]: no such file");
    }

    @Test
    void everyPythonEnvironmentInSightIsSearchedInOrderThenTheSoname() throws IOException {
        Path ncclHome = tmp.resolve("nccl-home");
        Files.createDirectories(ncclHome.resolve("lib"));
        Files.writeString(ncclHome.resolve("lib/libnccl.so.2"), "x");
        Path venv = tmp.resolve("venv");
        Path venvLib = wheel(venv, "python3.12");
        Path conda = tmp.resolve("conda");
        Path condaLib = wheel(conda, "python3.11");
        Path onPath = tmp.resolve("opt/py");
        Path onPathLib = wheel(onPath, "python3.10");
        python(onPath.resolve("bin"));
        Path pp = tmp.resolve("pythonpath");
        Path ppLib = pp.resolve("nvidia/nccl/lib/libnccl.so.2");
        Files.createDirectories(ppLib.getParent());
        Files.writeString(ppLib, "x");
        Path userLib = wheel(tmp.resolve("home/.local"), "python3.12");
        Path systemLib = tmp.resolve("usr-local-lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
        Files.createDirectories(systemLib.getParent());
        Files.writeString(systemLib, "x");

        Map<String, String> env = new HashMap<>();
        env.put("NCCL_HOME", ncclHome.toString());
        env.put("VIRTUAL_ENV", venv.toString());
        env.put("CONDA_PREFIX", conda.toString());
        env.put("PATH", onPath.resolve("bin") + ":" + tmp.resolve("no-such-bin"));
        env.put("PYTHONPATH", pp.toString());
        NcclLibraryCandidates c = of(env);
        assertThat(c.paths()).containsExactly(ncclHome.resolve("lib/libnccl.so.2").toString(), venvLib.toString(),
                condaLib.toString(), onPathLib.toString(), ppLib.toString(), userLib.toString(), systemLib.toString(),
                "libnccl.so.2");
    }

    @Test
    void aVenvPythonThatLinksToTheSystemPythonSearchesBothPrefixes() throws IOException {
        Path system = tmp.resolve("sys");
        Path systemLib = wheel(system, "python3.12");
        Path real = python(system.resolve("bin"));
        Path venv = tmp.resolve("venv");
        Path venvLib = wheel(venv, "python3.12");
        Files.createDirectories(venv.resolve("bin"));
        Files.createSymbolicLink(venv.resolve("bin/python3"), real);
        NcclLibraryCandidates c = of(Map.of("PATH", venv.resolve("bin").toString()));
        assertThat(c.paths()).containsSubsequence(venvLib.toString(), systemLib.toString(), "libnccl.so.2");
    }

    @Test
    void duplicatesAreLookedAtOnce() throws IOException {
        Path venv = tmp.resolve("venv");
        Path lib = wheel(venv, "python3.12");
        NcclLibraryCandidates c = of(Map.of("VIRTUAL_ENV", venv.toString(), "CONDA_PREFIX", venv.toString()));
        assertThat(c.paths()).containsExactly(lib.toString(), "libnccl.so.2");
    }

    @Test
    void notFoundListsEveryPlaceWithItsReason() throws IOException {
        Path venv = tmp.resolve("venv");
        Path lib = wheel(venv, "python3.12");  // exists, but the loader will refuse it
        Path empty = tmp.resolve("conda-without-python");
        Files.createDirectories(empty);
        Path ncclHome = tmp.resolve("nccl-home");
        NcclLibraryCandidates c = of(Map.of("VIRTUAL_ENV", venv.toString(), "CONDA_PREFIX", empty.toString(),
                "NCCL_HOME", ncclHome.toString()));
        String loader = "NCCL not found: tried 2 places:\n  " + lib + ": invalid ELF header\n  libnccl.so.2: "
                + "cannot open shared object file: No such file or directory";
        String message = c.notFoundMessage(loader);
        assertThat(message).startsWith("NCCL (libnccl.so.2) not found; looked at ");
        assertThat(message).contains(ncclHome.resolve("lib/libnccl.so.2") + " [NCCL_HOME]: no such file");
        assertThat(message).contains(lib + " [VIRTUAL_ENV]: invalid ELF header");
        assertThat(message).contains(empty.resolve("lib/python3*") + " [CONDA_PREFIX]: no site-packages or dist-packages there");
        assertThat(message).contains(tmp.resolve("home/.local/lib/python3*") + " [~/.local]: no site-packages");
        assertThat(message).contains("libnccl.so.2 [the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache)]: "
                + "cannot open shared object file");
        assertThat(message).contains("SYMMEM_NCCL_LIBRARY");
        // every place is one line
        assertThat(message.lines().filter(l -> l.startsWith("  ")).count()).isEqualTo(c.places().size());
    }
}
