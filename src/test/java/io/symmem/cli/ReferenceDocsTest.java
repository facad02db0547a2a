package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The configuration tables of README.md and docs/configuration.md and the command reference of
 * docs/cli.md are what the code says today: a variable, a default, an allowed value or a command
 * option that differs fails here, naming the document and the command that regenerates it.
 */
class ReferenceDocsTest {

    @Test
    void generatedReferenceMatchesTheCode() throws IOException {
        boolean write = Boolean.getBoolean(ReferenceDocs.WRITE_PROPERTY);
        List<String> stale = new ArrayList<>();
        for (Map.Entry<Path, Map<String, String>> doc : ReferenceDocs.blocks().entrySet()) {
            String text = ReferenceDocs.read(doc.getKey());
            String expected = ReferenceDocs.withBlocks(doc.getKey(), text, doc.getValue());
            if (expected.equals(text)) {
                continue;
            }
            if (write) {
                Files.writeString(doc.getKey(), expected);
            } else {
                stale.add(doc.getKey() + " (first difference at line " + firstDifferentLine(text, expected) + ")");
            }
        }
        assertThat(stale).as("generated reference out of date in %s; regenerate with: %s", stale, ReferenceDocs.REGENERATE)
                .isEmpty();
    }

    @Test
    void aChangedDefaultIsCaught() throws IOException {
        Path readme = Path.of("README.md");
        String text = ReferenceDocs.read(readme);
        String tampered = text.replace("| `SYMMEM_TIMEOUT_BARRIER` | 30s |", "| `SYMMEM_TIMEOUT_BARRIER` | 31s |");
        assertThat(tampered).as("README.md's table lists SYMMEM_TIMEOUT_BARRIER with its default").isNotEqualTo(text);
        assertThat(ReferenceDocs.withBlocks(readme, tampered, ReferenceDocs.blocks().get(readme))).isNotEqualTo(tampered);
    }

    private static int firstDifferentLine(String a, String b) {
        String[] x = a.split("\n", -1);
        String[] y = b.split("\n", -1);
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            if (!x[i].equals(y[i])) {
                return i + 1;
            }
        }
        return Math.min(x.length, y.length) + 1;
    }
}
