package io.symmem.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Where libnvshmem_host is looked for, in order; the loader tries each with dlopen and, when none
 * loads, lists them all. A pure function of the environment, the home directory and the file system
 * root, so that tests build the layouts in temporary directories.
 *
 * <ol>
 * <li>{@code SYMMEM_NVSHMEM_HOME}: its {@code lib/}, then the directory itself when the library lies
 * directly in it;</li>
 * <li>{@code NVSHMEM_HOME}: its {@code lib/};</li>
 * <li>the pip wheel ({@code nvidia-nvshmem-cu12}/{@code -cu13}) layout,
 * {@code <site-packages>/nvidia/nvshmem/lib/}, in every Python environment present: VIRTUAL_ENV,
 * CONDA_PREFIX, each python3/python on PATH (the prefix of the PATH entry, which for a virtual
 * environment is the venv, then the prefix of the interpreter it links to), PYTHONPATH entries, the
 * user's {@code ~/.local}, the system's {@code dist-packages};</li>
 * <li>the bare soname, for the dynamic loader's own search.</li>
 * </ol>
 * The two variables' candidates are listed even when missing (the error then says what was not
 * there); the Python environments only where their site-packages directory exists. A path reached
 * twice is listed once, with its first origin.
 */
public final class NvshmemLibraryLocator {
    /** The soname PyTorch's wheels and NVSHMEM 3.x installations provide. */
    public static final String SONAME = "libnvshmem_host.so.3";
    static final String LOADER_ORIGIN = "the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache)";
    private static final Path WHEEL_LIB = Path.of("nvidia", "nvshmem", "lib", SONAME);
    private static final Pattern PYTHON3_DIR = Pattern.compile("python3(?:\\.([0-9]+))?");

    private NvshmemLibraryLocator() {
    }

    /** For this process: its environment, the user's home, the real file system. */
    public static List<LibraryCandidate> candidates(Map<String, String> env) {
        return candidates(env, Path.of(System.getProperty("user.home")), Path.of("/"));
    }

    /**
     * @param home the user's home directory ({@code ~/.local} lies under it)
     * @param root where the system directories ({@code usr/local/lib}, {@code usr/lib}) are looked up
     */
    public static List<LibraryCandidate> candidates(Map<String, String> env, Path home, Path root) {
        Map<String, String> found = new LinkedHashMap<>();
        String symmemHome = set(env, ConfigVariable.SYMMEM_NVSHMEM_HOME.name());
        if (symmemHome != null) {
            String origin = ConfigVariable.SYMMEM_NVSHMEM_HOME.name() + "=" + symmemHome;
            add(found, Path.of(symmemHome, "lib", SONAME), origin);
            Path direct = Path.of(symmemHome, SONAME);
            if (Files.exists(direct)) {
                add(found, direct, origin);
            }
        }
        String nvshmemHome = set(env, ConfigVariable.NVSHMEM_HOME.name());
        if (nvshmemHome != null) {
            add(found, Path.of(nvshmemHome, "lib", SONAME), ConfigVariable.NVSHMEM_HOME.name() + "=" + nvshmemHome);
        }
        for (String variable : List.of("VIRTUAL_ENV", "CONDA_PREFIX")) {
            String prefix = set(env, variable);
            if (prefix != null) {
                wheelsUnder(found, Path.of(prefix), "pip wheel in " + variable + "=" + prefix);
            }
        }
        for (Path python : pythonsOnPath(env)) {
            String origin = "pip wheel of " + python + " on PATH";
            wheelsUnder(found, python.getParent().getParent(), origin);
            realPrefix(python).ifPresent(prefix -> wheelsUnder(found, prefix, origin));
        }
        for (String entry : entries(env, "PYTHONPATH")) {
            Path dir = Path.of(entry);
            if (dir.isAbsolute() && Files.isDirectory(dir)) {
                add(found, dir.resolve(WHEEL_LIB), "pip wheel in PYTHONPATH entry " + entry);
            }
        }
        for (Path sitePackages : python3Dirs(home.resolve(".local/lib"), "site-packages")) {
            add(found, sitePackages.resolve(WHEEL_LIB), "pip wheel in the user's site-packages");
        }
        for (Path distPackages : python3Dirs(root.resolve("usr/local/lib"), "dist-packages")) {
            add(found, distPackages.resolve(WHEEL_LIB), "pip wheel in the system's dist-packages");
        }
        Path system = root.resolve("usr/lib/python3/dist-packages");
        if (Files.isDirectory(system)) {
            add(found, system.resolve(WHEEL_LIB), "pip wheel in the system's dist-packages");
        }
        found.putIfAbsent(SONAME, LOADER_ORIGIN);
        List<LibraryCandidate> candidates = new ArrayList<>();
        found.forEach((path, origin) -> candidates.add(new LibraryCandidate(path, origin)));
        return candidates;
    }

    private static void wheelsUnder(Map<String, String> found, Path prefix, String origin) {
        for (Path sitePackages : python3Dirs(prefix.resolve("lib"), "site-packages")) {
            add(found, sitePackages.resolve(WHEEL_LIB), origin);
        }
    }

    /** {@code <lib>/python3*\/<leaf>} that exist, newest Python first (python3.12 before python3.9). */
    private static List<Path> python3Dirs(Path lib, String leaf) {
        if (!Files.isDirectory(lib)) {
            return List.of();
        }
        try (Stream<Path> children = Files.list(lib)) {
            return children.filter(p -> PYTHON3_DIR.matcher(p.getFileName().toString()).matches())
                    .map(p -> p.resolve(leaf)).filter(Files::isDirectory)
                    .sorted(Comparator.comparingInt(NvshmemLibraryLocator::minorVersion).reversed()
                            .thenComparing(Path::toString))
                    .toList();
        } catch (IOException unreadable) {
            return List.of();
        }
    }

    private static int minorVersion(Path sitePackages) {
        Matcher m = PYTHON3_DIR.matcher(sitePackages.getParent().getFileName().toString());
        return m.matches() && m.group(1) != null ? Integer.parseInt(m.group(1)) : -1;
    }

    /** Every python3, then python, in PATH's directories, in PATH's order, as PATH names them. */
    private static List<Path> pythonsOnPath(Map<String, String> env) {
        List<Path> pythons = new ArrayList<>();
        for (String dir : entries(env, "PATH")) {
            for (String name : List.of("python3", "python")) {
                Path python = Path.of(dir, name);
                if (python.isAbsolute() && python.getParent().getParent() != null && Files.isExecutable(python)) {
                    pythons.add(python);
                }
            }
        }
        return pythons;
    }

    /**
     * The prefix of the interpreter {@code python} links to, when that differs: a venv's bin/python
     * links to the base interpreter, whose own site-packages the venv may see too.
     */
    private static java.util.Optional<Path> realPrefix(Path python) {
        try {
            Path bin = python.toRealPath().getParent();
            return bin == null || bin.getParent() == null ? java.util.Optional.empty() : java.util.Optional.of(bin.getParent());
        } catch (IOException broken) {
            return java.util.Optional.empty();
        }
    }

    /** A colon-separated variable's non-empty entries that form paths. */
    private static List<String> entries(Map<String, String> env, String variable) {
        String value = env.get(variable);
        if (value == null) {
            return List.of();
        }
        List<String> entries = new ArrayList<>();
        for (String entry : value.split(":")) {
            try {
                if (!entry.isEmpty()) {
                    Path.of(entry);
                    entries.add(entry);
                }
            } catch (InvalidPathException notAPath) {
                // An entry with a NUL or the like cannot hold a library; skip it.
            }
        }
        return entries;
    }

    private static String set(Map<String, String> env, String variable) {
        String value = env.get(variable);
        return value == null || value.isBlank() ? null : value;
    }

    private static void add(Map<String, String> found, Path path, String origin) {
        found.putIfAbsent(path.toAbsolutePath().normalize().toString(), origin);
    }
}
