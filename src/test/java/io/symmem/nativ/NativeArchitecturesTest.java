package io.symmem.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The GPUs users have can run the library: machine code for A100 (8.0), L40S (8.9), H100 and H200
 * (9.0) and B200 (10.0), and PTX of 10.0 for what comes after, in every translation unit with device
 * code (a kernel missing for one architecture would fail only on that GPU, at its first launch).
 */
class NativeArchitecturesTest {
    private static final Path LIBRARY = Path.of("target/native/libsymmem.so");
    private static final Set<Integer> MACHINE_CODE = Set.of(80, 89, 90, 100);
    private static final Set<Integer> PTX = Set.of(100);

    @Test
    void theLibraryCarriesCodeForEveryGpuFromA100On() throws Exception {
        Assumptions.assumeTrue(Files.exists(LIBRARY), "skipped: " + LIBRARY + " not built");
        Optional<CudaFatbin> fatbin = CudaFatbin.of(LIBRARY);
        Assumptions.assumeTrue(fatbin.isPresent(),
                "skipped: " + LIBRARY + " has no device code (built without nvcc: the CUDA backends are not in it)");
        Set<Integer> cubins = new TreeSet<>();
        Set<Integer> ptx = new TreeSet<>();
        for (CudaFatbin.Entry e : fatbin.get().entries()) {
            (e.kind() == CudaFatbin.PTX ? ptx : cubins).add(e.arch());
        }
        assertThat(cubins).as("machine code (sm_XY) in " + LIBRARY).isEqualTo(new TreeSet<>(MACHINE_CODE));
        assertThat(ptx).as("PTX (compute_XY) in " + LIBRARY).isEqualTo(new TreeSet<>(PTX));
        // Every translation unit carries all of them: as many entries of each kind and architecture.
        long units = fatbin.get().entries().stream().filter(e -> e.kind() == CudaFatbin.PTX).count();
        for (int arch : MACHINE_CODE) {
            assertThat(fatbin.get().entries().stream().filter(e -> e.kind() == CudaFatbin.CUBIN && e.arch() == arch).count())
                    .as("translation units with sm_%d code", arch).isEqualTo(units);
        }
        assertThat(fatbin.get().crossChecked()).as("cubins whose own ELF header names the architecture read").isPositive();
    }
}
