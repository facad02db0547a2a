package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where libnvshmem_host is looked for: order, what is listed when missing, de-duplication. */
class NvshmemLibraryLocatorTest {
    private static final String WHEEL = "nvidia/nvshmem/lib/libnvshmem_host.so.3";

    @TempDir
    Path tmp;

    private Path home() throws IOException {
        return Files.createDirectories(tmp.resolve("home"));
    }

    private Path root() throws IOException {
        return Files.createDirectories(tmp.resolve("root"));
    }

    private List<LibraryCandidate> candidates(Map<String, String> env) throws IOException {
        return NvshmemLibraryLocator.candidates(env, home(), root());
    }

    private static List<String> paths(List<LibraryCandidate> candidates) {
        return candidates.stream().map(LibraryCandidate::path).toList();
    }

    private Path dir(String relative) throws IOException {
        return Files.createDirectories(tmp.resolve(relative));
    }

    private Path executable(String relative) throws IOException {
        Path file = tmp.resolve(relative);
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Test
    void withNothingSetOnlyTheDynamicLoaderIsAsked() throws IOException {
        assertThat(candidates(Map.of())).containsExactly(new LibraryCandidate("libnvshmem_host.so.3",
                "the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache)"));
    }

    @Test
    void theVariablesComeFirstAndAreListedEvenWhenMissing() throws IOException {
        List<LibraryCandidate> found = candidates(Map.of("SYMMEM_NVSHMEM_HOME", "/x", "NVSHMEM_HOME", "/y"));
        assertThat(found).containsExactly(
                new LibraryCandidate("/x/lib/libnvshmem_host.so.3", "SYMMEM_NVSHMEM_HOME=/x"),
                new LibraryCandidate("/y/lib/libnvshmem_host.so.3", "NVSHMEM_HOME=/y"),
                new LibraryCandidate("libnvshmem_host.so.3", NvshmemLibraryLocator.LOADER_ORIGIN));
    }

    @Test
    void symmemHomeMayHoldTheLibraryItself() throws IOException {
        Path own = dir("own");
        Files.writeString(own.resolve("libnvshmem_host.so.3"), "");
        assertThat(paths(candidates(Map.of("SYMMEM_NVSHMEM_HOME", own.toString())))).containsExactly(
                own + "/lib/libnvshmem_host.so.3", own + "/libnvshmem_host.so.3", "libnvshmem_host.so.3");
    }

    @Test
    void everyPythonEnvironmentInOrderOnlyWhereItsSitePackagesExist() throws IOException {
        Path venv = dir("venv/lib/python3.11/site-packages").getParent().getParent().getParent();
        Path conda = dir("conda/lib/python3.9/site-packages").getParent().getParent().getParent();
        dir("conda/lib/python3.12/site-packages");
        Path onPath = executable("py/bin/python3").getParent().getParent();
        dir("py/lib/python3.10/site-packages");
        Path pythonPath = dir("pp");
        Path user = dir("home/.local/lib/python3.11/site-packages");
        Path local = dir("root/usr/local/lib/python3.11/dist-packages");
        Path system = dir("root/usr/lib/python3/dist-packages");
        Map<String, String> env = new LinkedHashMap<>();
        env.put("VIRTUAL_ENV", venv.toString());
        env.put("CONDA_PREFIX", conda.toString());
        env.put("PATH", tmp.resolve("nowhere") + ":" + onPath.resolve("bin"));
        env.put("PYTHONPATH", pythonPath + ":" + tmp.resolve("missing"));
        env.put("NVSHMEM_HOME", "/y");

        List<LibraryCandidate> found = candidates(env);
        assertThat(paths(found)).containsExactly(
                "/y/lib/libnvshmem_host.so.3",
                venv + "/lib/python3.11/site-packages/" + WHEEL,
                conda + "/lib/python3.12/site-packages/" + WHEEL,
                conda + "/lib/python3.9/site-packages/" + WHEEL,
                onPath + "/lib/python3.10/site-packages/" + WHEEL,
                pythonPath + "/" + WHEEL,
                user + "/" + WHEEL,
                local + "/" + WHEEL,
                system + "/" + WHEEL,
                "libnvshmem_host.so.3");
        assertThat(found.get(1).origin()).isEqualTo("pip wheel in VIRTUAL_ENV=" + venv);
        assertThat(found.get(4).origin()).contains("py/bin/python3 on PATH");
    }

    @Test
    void aVenvsPythonLinkCountsForTheVenvAndForTheInterpreterItLinksTo() throws IOException {
        Path base = executable("base/bin/python3.11");
        dir("base/lib/python3.11/site-packages");
        Path venv = dir("venv/lib/python3.11/site-packages").getParent().getParent().getParent();
        Files.createDirectories(venv.resolve("bin"));
        Files.createSymbolicLink(venv.resolve("bin/python3"), base);
        List<String> found = paths(candidates(Map.of("PATH", venv.resolve("bin").toString())));
        assertThat(found).containsExactly(
                venv + "/lib/python3.11/site-packages/" + WHEEL,
                tmp.resolve("base") + "/lib/python3.11/site-packages/" + WHEEL,
                "libnvshmem_host.so.3");
    }

    @Test
    void aPathReachedTwiceIsListedOnceWithItsFirstOrigin() throws IOException {
        Path venv = dir("venv/lib/python3.11/site-packages").getParent().getParent().getParent();
        executable("venv/bin/python3");
        executable("venv/bin/python");
        Map<String, String> env = Map.of("VIRTUAL_ENV", venv.toString(), "CONDA_PREFIX", venv + "/.",
                "PATH", venv.resolve("bin") + ":" + venv.resolve("bin"),
                "PYTHONPATH", venv.resolve("lib/python3.11/site-packages").toString());
        List<LibraryCandidate> found = candidates(env);
        assertThat(found).hasSize(2);
        assertThat(found.get(0)).isEqualTo(new LibraryCandidate(venv + "/lib/python3.11/site-packages/" + WHEEL,
                "pip wheel in VIRTUAL_ENV=" + venv));
    }

    @Test
    void blankOrRelativeEntriesAreSkipped() throws IOException {
        dir("rel/lib/python3.11/site-packages");
        assertThat(candidates(Map.of("VIRTUAL_ENV", " ", "PATH", "::relative/bin", "PYTHONPATH", "rel:")))
                .extracting(LibraryCandidate::path).containsExactly("libnvshmem_host.so.3");
    }
}
