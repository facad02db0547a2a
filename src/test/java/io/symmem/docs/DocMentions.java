package io.symmem.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The inline code spans (`...`) of README.md and docs/*.md, each with its file and line. Fenced blocks
 * are left out: they hold commands, output and whole programs, not names the prose vouches for.
 */
final class DocMentions {
    private static final Pattern SPAN = Pattern.compile("`([^`\\n]+)`");

    /** One span: where it is and what it says (without the backticks, trimmed). */
    record Mention(Path file, int line, String text) {
        @Override
        public String toString() {
            return file + ":" + line + ": `" + text + "`";
        }
    }

    private DocMentions() {
    }

    static List<Path> pages() {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    static List<Mention> all() {
        List<Mention> mentions = new ArrayList<>();
        for (Path page : pages()) {
            mentions.addAll(in(page, ProjectFiles.text(page)));
        }
        return mentions;
    }

    static List<Mention> in(Path file, String markdown) {
        List<Mention> mentions = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        boolean fenced = false;
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].stripLeading().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher span = SPAN.matcher(lines[i]);
            while (span.find()) {
                mentions.add(new Mention(file, i + 1, span.group(1).strip()));
            }
        }
        return mentions;
    }
}
