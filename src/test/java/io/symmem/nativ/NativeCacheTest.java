package io.symmem.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NativeCacheTest {
    @Test
    void classesFromADirectoryHaveNoJarAndLeaveJavaCppsDefault() {
        // The test classes load from target/test-classes: nothing is unpacked from a directory.
        assertThat(NativeCache.jarOf(NativeCacheTest.class)).isNull();
    }

    @Test
    void aJarOnTheClassPathIsFound() {
        // JUnit's own classes come from a jar in the local repository.
        Path jar = NativeCache.jarOf(Test.class);
        assertThat(jar).isNotNull();
        assertThat(Files.isRegularFile(jar)).isTrue();
        assertThat(jar.getFileName().toString()).endsWith(".jar");
    }
}
