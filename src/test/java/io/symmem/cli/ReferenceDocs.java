package io.symmem.cli;

import io.symmem.config.ConfigVariable;
import io.symmem.config.EffectiveSetting;
import io.symmem.config.SymmemConfigLoader;
import io.symmem.nativ.NativeTunables;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * The parts of the docs that the code describes: the configuration tables (from {@link ConfigVariable},
 * the defaults SmallRye applies and the native library's tunables table, all as `symmem config` lists
 * them), the variables read outside those ({@link OtherVariables}) and the command reference (picocli's
 * help of every command). Each sits in a document between
 * {@code <!-- generated:NAME -->} and {@code <!-- end generated:NAME -->}; {@link ReferenceDocsTest}
 * compares, and rewrites them when run with {@value #WRITE_PROPERTY}=true.
 */
final class ReferenceDocs {
    static final String WRITE_PROPERTY = "symmem.docs.write";
    static final String REGENERATE = "mvn -B -o -q test -Dtest=ReferenceDocsTest -D" + WRITE_PROPERTY + "=true";
    private static final Pattern UNSET_NUMBER = Pattern.compile("\\(unset: (\\d+)\\)");
    private static final int HELP_WIDTH = 100;

    private ReferenceDocs() {
    }

    /** Every generated block: document → (block name → its text). */
    static Map<Path, Map<String, String>> blocks() {
        Map<Path, Map<String, String>> docs = new LinkedHashMap<>();
        docs.put(Path.of("README.md"), Map.of("config-summary", configSummary()));
        docs.put(Path.of("docs/configuration.md"), Map.of("config-table", configTable(), "other-variables", OtherVariables.table()));
        docs.put(Path.of("docs/cli.md"), Map.of("cli-help", cliHelp()));
        return docs;
    }

    private record Row(String name, String fallback, String allowed) {
    }

    /** Every variable in `symmem config`'s order: the Java side's, then the native library's tunables. */
    private static List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        for (EffectiveSetting s : SymmemConfigLoader.effective(Map.of(), new Properties())) {
            if (ConfigVariable.forName(s.variable()).isEmpty()) {
                continue;
            }
            rows.add(new Row(s.variable(), s.value(), s.allowed()));
        }
        for (NativeTunables.Tunable t : NativeTunables.list()) {
            Matcher m = UNSET_NUMBER.matcher(t.allowed());
            rows.add(new Row(t.name(), m.find() ? m.group(1) : "(computed)",
                    t.allowed() + " (native, " + t.backend() + " backend)"));
        }
        return rows;
    }

    static String configTable() {
        StringBuilder out = new StringBuilder("| Variable | Unset | Allowed values and meaning |\n|---|---|---|\n");
        for (Row r : rows()) {
            out.append("| `").append(r.name()).append("` | ").append(cell(r.fallback())).append(" | ")
                    .append(cell(r.allowed())).append(" |\n");
        }
        return out.toString();
    }

    static String configSummary() {
        StringBuilder out = new StringBuilder("| Variable | Unset |\n|---|---|\n");
        for (Row r : rows()) {
            out.append("| `").append(r.name()).append("` | ").append(cell(r.fallback())).append(" |\n");
        }
        return out.toString();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /** `symmem --help`, then the help of every command that is not hidden, depth first. */
    static String cliHelp() {
        StringBuilder out = new StringBuilder();
        appendHelp(out, SymmemMain.commandLine(CommandLine.defaultFactory()), "symmem");
        return out.toString();
    }

    private static void appendHelp(StringBuilder out, CommandLine command, String path) {
        command.setUsageHelpWidth(HELP_WIDTH);
        out.append("### `").append(path).append("`\n\n```\n")
                .append(command.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing()).append("\n```\n\n");
        for (CommandLine sub : new LinkedHashSet<>(command.getSubcommands().values())) {
            if (!sub.getCommandSpec().usageMessage().hidden()) {
                appendHelp(out, sub, path + " " + sub.getCommandName());
            }
        }
    }

    /** {@code document} with each named block replaced by its text; fails naming a block that has no markers. */
    static String withBlocks(Path document, String text, Map<String, String> blocks) {
        String result = text;
        for (Map.Entry<String, String> block : blocks.entrySet()) {
            String begin = "<!-- generated:" + block.getKey() + " -->";
            String end = "<!-- end generated:" + block.getKey() + " -->";
            int from = result.indexOf(begin);
            int to = result.indexOf(end);
            if (from < 0 || to < from) {
                throw new IllegalStateException(document + " lacks the markers " + begin + " ... " + end);
            }
            result = result.substring(0, from + begin.length()) + "\n" + block.getValue() + result.substring(to);
        }
        return result;
    }

    static String read(Path document) throws IOException {
        return Files.readString(document);
    }
}
