package io.symmem.nccl;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where symmem looks for libnccl.so.2, in order, and why each place was or was not a candidate.
 *
 * <ol>
 * <li>{@code SYMMEM_NCCL_LIBRARY}: when set, the ONLY candidate (an explicit choice that fails must
 * not be hidden by some other NCCL that happens to load);
 * <li>{@code $NCCL_HOME/lib/libnccl.so.2};
 * <li>PyTorch's pip wheel {@code <site-packages>/nvidia/nccl/lib/libnccl.so.2} of every Python
 * environment in sight: {@code VIRTUAL_ENV}, {@code CONDA_PREFIX}, each {@code python3}/{@code python}
 * on {@code PATH} (its {@code bin/..} prefix, then the prefix of the file it links to), each
 * {@code PYTHONPATH} entry, {@code ~/.local}, then the system's {@code lib/python3*}
 * {@code site-packages}/{@code dist-packages};
 * <li>the bare soname {@code libnccl.so.2}, which the dynamic loader searches (LD_LIBRARY_PATH,
 * ld.so.cache: the system package).
 * </ol>
 * Files that do not exist are not handed to the loader but kept, with the reason, for the "not
 * found" message, which lists every place looked.
 */
public final class NcclLibraryCandidates {
    public static final String SONAME = "libnccl.so.2";
    static final String WHEEL_LIB = "nvidia/nccl/lib/" + SONAME;

    /** A place looked at: a path, what led there, and (when it is not handed to the loader) why not. */
    public record Place(String path, String source, String skipped) {
        public boolean candidate() {
            return skipped == null;
        }
    }

    private final List<Place> places = new ArrayList<>();
    private final Set<String> seen = new LinkedHashSet<>();

    private NcclLibraryCandidates() {
    }

    /** From this process's environment, home directory and the usual system prefixes. */
    public static NcclLibraryCandidates fromEnvironment() {
        return of(System.getenv(), Path.of(System.getProperty("user.home")),
                List.of(Path.of("/usr/local/lib"), Path.of("/usr/lib")));
    }

    /**
     * @param env the environment to read
     * @param home the home directory (for ~/.local)
     * @param systemLibDirs directories holding system-wide python3* trees (/usr/local/lib, /usr/lib)
     */
    public static NcclLibraryCandidates of(Map<String, String> env, Path home, List<Path> systemLibDirs) {
        NcclLibraryCandidates c = new NcclLibraryCandidates();
        String explicit = env.get("SYMMEM_NCCL_LIBRARY");
        if (explicit != null && !explicit.isBlank()) {
            c.file(Path.of(explicit), "SYMMEM_NCCL_LIBRARY");
            return c;
        }
        String ncclHome = env.get("NCCL_HOME");
        if (ncclHome != null && !ncclHome.isBlank()) {
            c.file(Path.of(ncclHome, "lib", SONAME), "NCCL_HOME");
        }
        prefix(c, env.get("VIRTUAL_ENV"), "VIRTUAL_ENV");
        prefix(c, env.get("CONDA_PREFIX"), "CONDA_PREFIX");
        String path = env.get("PATH");
        if (path != null) {
            for (String dir : path.split(":")) {
                if (dir.isEmpty()) {
                    continue;
                }
                for (String exe : List.of("python3", "python")) {
                    Path python = Path.of(dir, exe);
                    if (!Files.isExecutable(python)) {
                        continue;
                    }
                    Path bin = python.getParent();
                    String source = exe + " on PATH (" + python + ")";
                    if (bin.getParent() != null) {
                        c.sitePackages(bin.getParent(), source);
                    }
                    try {
                        Path real = python.toRealPath();
                        if (!real.equals(python) && real.getParent() != null && real.getParent().getParent() != null) {
                            c.sitePackages(real.getParent().getParent(), source + " -> " + real);
                        }
                    } catch (IOException e) {
                        // a dangling link: its bin/.. prefix above was looked at already
                    }
                }
            }
        }
        String pythonPath = env.get("PYTHONPATH");
        if (pythonPath != null) {
            for (String entry : pythonPath.split(":")) {
                if (!entry.isEmpty()) {
                    c.file(Path.of(entry).resolve(WHEEL_LIB), "PYTHONPATH");
                }
            }
        }
        if (home != null) {
            c.sitePackages(home.resolve(".local"), "~/.local");
        }
        for (Path lib : systemLibDirs) {
            c.pythonTrees(lib, "system Python under " + lib);
        }
        c.places.add(new Place(SONAME, "the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache)", null));
        return c;
    }

    private static void prefix(NcclLibraryCandidates c, String prefix, String source) {
        if (prefix != null && !prefix.isBlank()) {
            c.sitePackages(Path.of(prefix), source);
        }
    }

    /** prefix/lib/python3* /site-packages (or dist-packages). */
    private void sitePackages(Path prefix, String source) {
        pythonTrees(prefix.resolve("lib"), source);
    }

    private void pythonTrees(Path lib, String source) {
        List<Path> trees = new ArrayList<>();
        if (Files.isDirectory(lib)) {
            try (DirectoryStream<Path> dirs = Files.newDirectoryStream(lib, "python3*")) {
                for (Path d : dirs) {
                    for (String kind : List.of("site-packages", "dist-packages")) {
                        if (Files.isDirectory(d.resolve(kind))) {
                            trees.add(d.resolve(kind));
                        }
                    }
                }
            } catch (IOException e) {
                skip(lib.toString(), source, "cannot list it: " + e.getMessage());
                return;
            }
        }
        if (trees.isEmpty()) {
            skip(lib.resolve("python3*").toString(), source, "no site-packages or dist-packages there");
            return;
        }
        trees.sort(Comparator.comparing(Path::toString).reversed());  // python3.12 before python3.10
        for (Path tree : trees) {
            file(tree.resolve(WHEEL_LIB), source);
        }
    }

    private void file(Path file, String source) {
        String p = file.toAbsolutePath().normalize().toString();
        if (!seen.add(p)) {
            return;
        }
        if (Files.isRegularFile(file)) {
            places.add(new Place(p, source, null));
        } else {
            places.add(new Place(p, source, Files.isDirectory(file) ? "a directory, not a file" : "no such file"));
        }
    }

    private void skip(String place, String source, String why) {
        if (seen.add(place)) {
            places.add(new Place(place, source, why));
        }
    }

    /** The same places without the bare soname (tests: a machine with NCCL installed would find it). */
    NcclLibraryCandidates withoutSoname() {
        NcclLibraryCandidates c = new NcclLibraryCandidates();
        places.stream().filter(p -> !p.path().equals(SONAME)).forEach(c.places::add);
        return c;
    }

    /** Every place looked at, in order. */
    public List<Place> places() {
        return List.copyOf(places);
    }

    /** What is handed to the loader, in order. */
    public List<String> paths() {
        return places.stream().filter(Place::candidate).map(Place::path).toList();
    }

    /**
     * The "not found" message: every place in order with why it failed. {@code loaderMessage} is
     * libsymmem's (one "  path: reason" line per candidate handed to the loader); its reasons are
     * put beside the places they belong to.
     */
    public String notFoundMessage(String loaderMessage) {
        StringBuilder b = new StringBuilder("NCCL (" + SONAME + ") not found; looked at ").append(places.size())
                .append(places.size() == 1 ? " place" : " places").append(", in order:");
        for (Place place : places) {
            String why = place.skipped() != null ? place.skipped() : loaderReason(loaderMessage, place.path());
            b.append("\n  ").append(place.path()).append(" [").append(place.source()).append("]: ").append(why);
        }
        b.append("\nSet SYMMEM_NCCL_LIBRARY to the file's absolute path, or NCCL_HOME, or install NCCL "
                + "(pip install nvidia-nccl-cu13 in the Python environment on PATH, or the system's libnccl2 package).");
        return b.toString();
    }

    private static String loaderReason(String loaderMessage, String path) {
        if (loaderMessage != null) {
            String key = "\n  " + path + ": ";
            int at = loaderMessage.indexOf(key);
            if (at >= 0) {
                int end = loaderMessage.indexOf('\n', at + key.length());
                return loaderMessage.substring(at + key.length(), end < 0 ? loaderMessage.length() : end);
            }
            return loaderMessage;
        }
        return "not tried";
    }
}
