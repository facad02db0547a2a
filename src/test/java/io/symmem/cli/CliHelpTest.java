package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import org.junit.jupiter.api.Test;

/**
 * The help is complete: every command says what it does in whole sentences (picocli shows a command's
 * first description line in its parent's list, so a line cut mid-sentence reads as a cut there), a
 * command with subcommands names each of them, and every option of a visible command is described.
 */
class CliHelpTest {
    private static List<CommandLine> everyCommand() {
        List<CommandLine> all = new ArrayList<>();
        collect(SymmemMain.commandLine(CommandLine.defaultFactory()), all);
        return all;
    }

    private static void collect(CommandLine command, List<CommandLine> all) {
        all.add(command);
        new LinkedHashSet<>(command.getSubcommands().values()).forEach(sub -> collect(sub, all));
    }

    private static String path(CommandSpec spec) {
        return spec.qualifiedName(" ");
    }

    @Test
    void everyDescriptionLineIsAWholeSentence() {
        List<String> cut = new ArrayList<>();
        for (CommandLine command : everyCommand()) {
            String[] lines = command.getCommandSpec().usageMessage().description();
            if (lines.length == 0) {
                cut.add(path(command.getCommandSpec()) + ": no description");
            }
            for (String line : lines) {
                if (!endsASentence(line)) {
                    cut.add(path(command.getCommandSpec()) + ": \"" + line + "\"");
                }
            }
        }
        assertThat(cut).as("description lines that do not end a sentence (end each line with '.')").isEmpty();
    }

    @Test
    void aCommandWithSubcommandsNamesEachOfThem() {
        List<String> missing = new ArrayList<>();
        for (CommandLine command : everyCommand()) {
            CommandSpec spec = command.getCommandSpec();
            if (spec.parent() == null || command.getSubcommands().isEmpty()) {
                continue; // the root's list of commands is the whole of its help
            }
            String description = String.join(" ", spec.usageMessage().description());
            for (String name : command.getSubcommands().keySet()) {
                if (!description.matches("(?s).*\\b" + java.util.regex.Pattern.quote(name) + "\\b.*")) {
                    missing.add(path(spec) + " does not name " + name);
                }
            }
        }
        assertThat(missing).isEmpty();
    }

    @Test
    void everyOptionOfAVisibleCommandIsDescribed() {
        List<String> bare = new ArrayList<>();
        for (CommandLine command : everyCommand()) {
            if (command.getCommandSpec().usageMessage().hidden()) {
                continue;
            }
            for (OptionSpec option : command.getCommandSpec().options()) {
                String text = String.join(" ", option.description()).strip();
                if (!option.hidden() && (text.isEmpty() || !endsASentence(text))) {
                    bare.add(path(command.getCommandSpec()) + " " + option.longestName() + ": \"" + text + "\"");
                }
            }
        }
        assertThat(bare).as("options without a whole-sentence description").isEmpty();
    }

    @Test
    void theCheckCatchesALineCutMidSentence() {
        assertThat(endsASentence("Serves the store until stopped:")).isFalse();
        assertThat(endsASentence("set / get / add with 1 client (each its own")).isFalse();
        assertThat(endsASentence("Serves the store until stopped.")).isTrue();
        assertThat(endsASentence("Runs (default ${DEFAULT-VALUE}).")).isTrue();
    }

    private static boolean endsASentence(String line) {
        String s = line.strip();
        return s.endsWith(".") || s.endsWith(".)") || s.endsWith(".\"") || s.endsWith("?");
    }
}
