package io.symmem.cli;

import java.util.List;

/**
 * The variables symmem reads outside {@link io.symmem.config.ConfigVariable} and the native tunables:
 * other tools' variables it looks at or sets (where NCCL and NVSHMEM are, NCCL's connection mode,
 * PyTorch's multicast switch) and the defaults of `symmem launch`. `symmem config` does not list or
 * check them (they are other tools' to judge), so their documentation is this table, which
 * {@link ReferenceDocs} writes into docs/configuration.md; DocNamesTest fails when the code reads a
 * variable by name that has no row there. Each meaning is what the code named in it does.
 */
final class OtherVariables {
    private OtherVariables() {
    }

    /** One variable: its name, the part of symmem that reads it, and what that part does with it. */
    record Variable(String name, String readBy, String meaning) {
    }

    static final List<Variable> ALL = List.of(
            new Variable("NNODES", "`symmem launch`", "the default of --nnodes (unset: 1)"),
            new Variable("NODE_RANK", "`symmem launch`", "the default of --node-rank (unset: 0)"),
            // NcclLibraryCandidates
            new Variable("NCCL_HOME", "nccl backend", "an NCCL installation: `$NCCL_HOME/lib/libnccl.so.2` is tried after "
                    + "SYMMEM_NCCL_LIBRARY (which, when set, is the only candidate) and before the pip wheels"),
            // NcclLibraryCandidates and NvshmemLibraryLocator
            new Variable("VIRTUAL_ENV", "nccl and nvshmem backends", "a Python environment whose site-packages are searched for "
                    + "the pip wheels' libnccl.so.2 (nvidia/nccl/lib) and libnvshmem_host.so.3 (nvidia/nvshmem/lib)"),
            new Variable("CONDA_PREFIX", "nccl and nvshmem backends", "searched as VIRTUAL_ENV is"),
            new Variable("PATH", "nccl and nvshmem backends, `symmem bench startup`", "each python3/python on it: its "
                    + "environment's site-packages are searched as VIRTUAL_ENV's; `bench startup` also compares each java on it"),
            new Variable("PYTHONPATH", "nccl and nvshmem backends", "each entry is searched for the pip wheels' libraries"),
            // JavaRuntimes
            new Variable("JAVA_HOME", "`symmem bench startup`", "its bin/java is one of the JVMs compared (with those under "
                    + "/usr/lib/jvm and on PATH) without --java"),
            // nccl_loader.cpp
            new Variable("NCCL_RUNTIME_CONNECT", "libsymmem (nccl backend)", "unset or empty: symmem sets 0 before NCCL's first "
                    + "communicator, so that NCCL connects every algorithm during the init and the split, under their deadline, "
                    + "not at a first collective; a value that is set is kept (every rank must agree); `symmem nccl-check` "
                    + "prints the value NCCL reads and where it came from"),
            // nvshmem_lib.cpp, NvshmemInfo
            new Variable("NVSHMEM_BOOTSTRAP_UID_PLUGIN", "libsymmem (nvshmem backend)", "unset: symmem sets it to the "
                    + "nvshmem_bootstrap_uid.so.3 beside the loaded libnvshmem_host (a pip wheel's lib directory is not on "
                    + "the loader's path); a value that is set is kept; /v1/info shows it"),
            // driver.cu
            new Variable("TORCH_SYMM_MEM_DISABLE_MULTICAST", "libsymmem (cuda backend)", "PyTorch's name for "
                    + "SYMMEM_DISABLE_MULTICAST: 1, true, yes or on (any case) reports NVLink multicast as disabled, as that does"));

    static String table() {
        StringBuilder out = new StringBuilder("| Variable | Read by | Meaning |\n|---|---|---|\n");
        for (Variable v : ALL) {
            out.append("| `").append(v.name()).append("` | ").append(v.readBy()).append(" | ")
                    .append(v.meaning().replace("|", "\\|")).append(" |\n");
        }
        return out.toString();
    }
}
