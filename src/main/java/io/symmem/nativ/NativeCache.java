package io.symmem.nativ;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;

/**
 * Where JavaCPP unpacks libsymmem from the jar: a directory beside that jar, when it can be made there.
 * JavaCPP's default, {@code ~/.javacpp/cache/<jar name>/}, is shared by every build whose jar has the
 * same name. A second build (another clone, another version) rewrites the library there while the
 * first build's processes have it mapped, and those die of SIGBUS inside the dynamic loader. Beside
 * the jar, each build has its own copy. Left to JavaCPP when the user chose a directory
 * ({@value #PROPERTY}), when the classes are not in a jar (then nothing is unpacked), or when the
 * jar's directory is read-only (an installed image: one build only).
 */
final class NativeCache {
    static final String PROPERTY = "org.bytedeco.javacpp.cachedir";
    static final String DIRECTORY = ".javacpp-cache";

    private NativeCache() {
    }

    /** Sets {@value #PROPERTY} for this process, before JavaCPP reads it. */
    static void useDirectoryBesideTheJar() {
        if (System.getProperty(PROPERTY) != null) {
            return;
        }
        Path jar = jarOf(NativeCache.class);
        if (jar == null) {
            return;
        }
        Path dir = jar.resolveSibling(DIRECTORY);
        try {
            Files.createDirectories(dir);
        } catch (java.io.IOException | SecurityException e) {
            return;  // JavaCPP's default
        }
        if (Files.isWritable(dir)) {
            System.setProperty(PROPERTY, dir.toString());
        }
    }

    /** The jar file {@code type} was loaded from, or null (a directory, or no code source). */
    static Path jarOf(Class<?> type) {
        try {
            CodeSource source = type.getProtectionDomain().getCodeSource();
            if (source == null || source.getLocation() == null) {
                return null;
            }
            Path path = Path.of(source.getLocation().toURI());
            return Files.isRegularFile(path) ? path : null;
        } catch (java.net.URISyntaxException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }
}
