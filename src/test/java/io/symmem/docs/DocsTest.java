package io.symmem.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs a newcomer reads first hold together: the quick starts show the very files that are
 * compiled and run (docs/examples, LibraryExampleIT), every page is reachable from docs/index.md,
 * relative links lead to files that exist, and no word of the project's own development process
 * (issue numbers, machine loans, sessions) is in the README or docs/.
 */
class DocsTest {
    private static final Path DOCS = Path.of("docs");
    private static final Path INDEX = DOCS.resolve("index.md");
    private static final Path EXAMPLES = DOCS.resolve("examples");

    /** Words of how the project is developed, not of what it is. */
    static final Pattern PROCESS_WORDS = Pattern.compile("(?i)\\bissues? #?\\d+|\\bthe issue\\b|\\bissue's\\b|\\blent\\b"
            + "|\\bwork ?place\\b|the GPU machine|product card|\\bcarrying\\b\\s*[`\\[(]|\\bcarr(y|ied)\\b"
            + "|\\bnvidia-h[12]00|\\bh[12]00-x\\d|PREBUILT=|\\.gpu/bin"
            + "|\\basked for\\b|\\bgiven\\b|\\bsessions?\\b|\\bitems? #?\\d+"
            + "|\\b(other |another )?engineer'?s?\\b");

    @Test
    void theQuickStartsShowTheExampleFilesVerbatim() throws IOException {
        String index = Files.readString(INDEX);
        List<String> blocks = codeBlocks(index);
        for (Path example : List.of(EXAMPLES.resolve("library/pom.xml"),
                EXAMPLES.resolve("library/src/main/java/AllReduceExample.java"),
                EXAMPLES.resolve("pytorch/nccl_from_sidecar.py"))) {
            assertThat(blocks).as("docs/index.md shows %s as one code block, unchanged", example)
                    .contains(Files.readString(example));
        }
    }

    @Test
    void theLibraryPageShowsTheExampleThatLibraryExampleItRuns() throws IOException {
        // LibraryExampleIT compiles and runs the first ```java block of docs/library.md.
        String first = codeBlocks(Files.readString(DOCS.resolve("library.md")), "java").get(0);
        assertThat(first).isEqualTo(Files.readString(EXAMPLES.resolve("library/src/main/java/AllReduceExample.java")));
    }

    @Test
    void theExamplePomDependsOnThisVersion() throws IOException {
        String project = Files.readString(Path.of("pom.xml"));
        Matcher version = Pattern.compile("<artifactId>symmem</artifactId>\\s*<version>([^<]+)</version>").matcher(project);
        assertThat(version.find()).isTrue();
        String example = Files.readString(EXAMPLES.resolve("library/pom.xml"));
        assertThat(example).contains("<groupId>io.symmem</groupId>\n      <artifactId>symmem</artifactId>\n      <version>"
                + version.group(1) + "</version>");
    }

    @Test
    void theExamplePomImportsTheQuarkusPlatformThisBuildUses() throws IOException {
        // Without the same BOM, a project that depends on symmem resolves other versions of its libraries.
        String project = Files.readString(Path.of("pom.xml"));
        Matcher group = Pattern.compile("<quarkus.platform.group-id>([^<]+)</quarkus.platform.group-id>").matcher(project);
        Matcher version = Pattern.compile("<quarkus.platform.version>([^<]+)</quarkus.platform.version>").matcher(project);
        assertThat(group.find() && version.find()).as("pom.xml names its Quarkus platform").isTrue();
        assertThat(Files.readString(EXAMPLES.resolve("library/pom.xml")))
                .as("docs/examples/library/pom.xml imports %s:quarkus-bom %s, as pom.xml does", group.group(1), version.group(1))
                .containsPattern("<groupId>" + Pattern.quote(group.group(1)) + "</groupId>\\s*<artifactId>quarkus-bom</artifactId>\\s*<version>"
                        + Pattern.quote(version.group(1)) + "</version>");
    }

    @Test
    void everyPageIsReachableFromTheIndexAndTheReadmeLinksTheIndex() throws IOException {
        String index = Files.readString(INDEX);
        List<String> unlinked = new ArrayList<>();
        try (Stream<Path> pages = Files.list(DOCS)) {
            pages.filter(p -> p.toString().endsWith(".md") && !p.equals(INDEX))
                    .filter(p -> !index.contains("](" + p.getFileName() + ")") && !index.contains("](" + p.getFileName() + "#"))
                    .forEach(p -> unlinked.add(p.getFileName().toString()));
        }
        assertThat(unlinked).as("pages docs/index.md does not link").isEmpty();
        assertThat(Files.readString(Path.of("README.md"))).contains("](docs/index.md)");
    }

    @Test
    void relativeLinksLeadToFilesAndHeadingsThatExist() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            Matcher link = Pattern.compile("\\]\\(([^)#\\s]*)(?:#([^)\\s]*))?\\)").matcher(Files.readString(page));
            while (link.find()) {
                String file = link.group(1);
                String anchor = link.group(2);
                if (file.contains("://") || file.startsWith("mailto:") || (file.isEmpty() && anchor == null)) {
                    continue;
                }
                Path target = file.isEmpty() ? page : page.toAbsolutePath().getParent().resolve(file);
                if (!Files.exists(target)) {
                    broken.add(page + " -> " + file + " (no such file)");
                } else if (anchor != null && (file.isEmpty() || file.endsWith(".md"))) {
                    if (!anchors(Files.readString(target)).contains(anchor)) {
                        broken.add(page + " -> " + file + "#" + anchor + " (no such heading)");
                    }
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as '-', repeats numbered. */
    static java.util.Set<String> anchors(String markdown) {
        java.util.Set<String> anchors = new java.util.HashSet<>();
        java.util.Map<String, Integer> seen = new java.util.HashMap<>();
        Matcher heading = Pattern.compile("(?m)^#+ (.*)$").matcher(markdown.replaceAll("(?s)```.*?```", ""));
        while (heading.find()) {
            String anchor = heading.group(1).strip().toLowerCase(java.util.Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
            int n = seen.merge(anchor, 1, Integer::sum);
            anchors.add(n == 1 ? anchor : anchor + "-" + (n - 1));
        }
        return anchors;
    }

    @Test
    void anchorsAreGitHubs() {
        assertThat(anchors("# A\n## Store on etcd (2-core machine), 2026\n## Why 4 × H200?\n## A\n"))
                .containsExactlyInAnyOrder("a", "store-on-etcd-2-core-machine-2026", "why-4--h200", "a-1");
    }

    @Test
    void noWordOfTheDevelopmentProcess() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path page : pages()) {
            String[] lines = Files.readString(page).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                Matcher m = PROCESS_WORDS.matcher(lines[i]);
                if (m.find()) {
                    found.add(page + ":" + (i + 1) + ": \"" + m.group() + "\"");
                }
            }
        }
        assertThat(found).as("say what the product is and does; history goes to docs/benchmarks-history.md, dated").isEmpty();
    }

    @Test
    void theWordListCatchesWhatItIsFor() {
        for (String line : List.of("as issue 22 asked", "the only kinds lent", "on the GPU machine",
                "(carry `.gpu/symmem-gpu.tar.xz`)", "on nvidia-h200-x4", "this workplace", "the product card",
                "while two other engineers built on it", "asked for 2 × H100, given 2 × H200", "the figures given below",
                "before and after in one session", "sessions of the day", "item 2's 2.0 µs", "Item 1 met",
                "the library carried", "carry the tarball", "h100-x2 machines", "on nvidia-h100-x1",
                "`PREBUILT=.gpu/bin-n scripts/gpu/run-nccl-speed.sh`", "binaries in .gpu/bin-p")) {
            assertThat(PROCESS_WORDS.matcher(line).find()).as(line).isTrue();
        }
        for (String line : List.of("every rank must issue them in order", "one MULTI_SET may hold 65,536 values",
                "a rank's liveness as its etcd lease", "every event carries the generation", "2 × H100 and 4 × H200",
                "the largest size requested", "items of 16 bytes")) {
            assertThat(PROCESS_WORDS.matcher(line).find()).as(line).isFalse();
        }
    }

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.list(DOCS)) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    private static List<String> codeBlocks(String markdown) {
        return codeBlocks(markdown, "[a-z]*");
    }

    private static List<String> codeBlocks(String markdown, String language) {
        Matcher m = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
        List<String> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(m.group(1));
        }
        return blocks;
    }
}
