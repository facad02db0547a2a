package io.symmem.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.docs.DocMentions.Mention;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The names the docs (README.md, docs/*.md) put in backticks are the code's names today: Java classes
 * and members resolve against the compiled io.symmem classes, symmem_* C names against the public
 * headers, and environment variables against docs/configuration.md; and every variable the code reads
 * by name has a row there. {@link CodeNameRules} says what counts as a name; {@link ForeignNames} lists
 * other projects' names the docs use as context. Each failure lists every offending file:line at once.
 * Needs the compiled classes (target/classes, target/test-classes), not the native library.
 */
class DocNamesTest {
    private static CodeNameRules rules;
    private static List<Mention> mentions;

    @BeforeAll
    static void readTheBuild() {
        rules = new CodeNameRules(JavaNames.compiled(), NativeNames.read());
        mentions = DocMentions.all();
    }

    @Test
    void everyJavaNameResolves() {
        assertThat(offending(rules::javaProblem))
                .as("Java names in backticks that no io.symmem class has (rules: CodeNameRules; other projects' names: ForeignNames)")
                .isEmpty();
    }

    @Test
    void everyCNameIsInThePublicHeaders() {
        assertThat(offending(rules::cProblem)).as("symmem_* names in backticks that the native build does not define").isEmpty();
    }

    @Test
    void everyVariableIsInTheConfigurationReference() {
        Set<String> reference = ConfigurationReference.variables();
        Predicate<String> tooling = readByTooling();
        assertThat(offending(text -> rules.variableProblem(text, reference, tooling)))
                .as("variables in backticks without a row in docs/configuration.md (other tools' variables: ForeignNames.VARIABLES)")
                .isEmpty();
    }

    @Test
    void everyVariableTheCodeReadsIsInTheConfigurationReference() {
        Set<String> reference = ConfigurationReference.variables();
        List<String> missing = VariableReads.ofTheProduct().stream().filter(r -> !reference.contains(r.variable()))
                .map(Object::toString).distinct().toList();
        assertThat(missing).as("variables the code reads without a row in docs/configuration.md; the generated tables "
                + "come from ConfigVariable, the native tunables and io.symmem.cli.OtherVariables").isEmpty();
    }

    // The rules themselves, on the names they are for.

    @Test
    void theRulesCatchStaleNames() {
        assertThat(rules.javaProblem("AllReduce.sumFloat32")).isPresent();
        assertThat(rules.javaProblem("memory.newStream()")).isPresent();
        assertThat(rules.javaProblem("NativeAbortedException")).isPresent();
        assertThat(rules.javaProblem("io.symmem.world.NoSuchWorld")).isPresent();
        assertThat(rules.javaProblem("Algorithm.THREE_SHOT")).isPresent();
        assertThat(rules.cProblem("symmem_no_such_call(buffer)")).isPresent();
        assertThat(rules.variableProblem("SYMMEM_NO_SUCH_SETTING=1", Set.of(), name -> false)).isPresent();
    }

    @Test
    void theRulesAcceptTheCodesNames() {
        for (String name : List.of("SymmemWorld", "SymmemWorld.formAgain()", "world.group(...)", "Algorithm.TWO_SHOT_CE",
                "NativeException.Aborted", "TcpStoreClient.Options.forSymmemServer()", "io.symmem.SymmemWorld",
                "SymmetricMemory.close()")) {
            assertThat(rules.javaProblem(name)).as(name).isEmpty();
        }
        for (String name : List.of("symmem_abort(reason)", "symmem_graph_*", "symmem_bench --world 2", "symmem_pool_segments",
                "symmem_buffer_copy_in/out")) {
            assertThat(rules.cProblem(name)).as(name).isEmpty();
        }
        for (String name : List.of("SYMMEM_ERR_ABORTED", "TWO_SHOT_CE", "CU_CTX_SYNC_MEMOPS", "CUDA_VISIBLE_DEVICES")) {
            assertThat(rules.variableProblem(name, Set.of(), n -> false)).as(name).isEmpty();
        }
    }

    @Test
    void proseIsNotTakenForNames() {
        for (String text : List.of("bin/symmem config", "pom.xml", "AllReduceExample.java", "Store", "Timeout", "GiB",
                "{\"op\":\"get\"}", "64MiB", "nccl_over_symmem_store.py", "List<byte[]>", "Content-Type", "dist.all_reduce(t)",
                "TCPStore", "target/native/symmem_host_bench", "DeviceBuffer::ordered")) {
            assertThat(rules.javaProblem(text)).as(text).isEmpty();
            assertThat(rules.cProblem(text)).as(text).isEmpty();
            assertThat(rules.variableProblem(text, Set.of(), n -> false)).as(text).isEmpty();
        }
    }

    @Test
    void codeBlocksAreNotMentions() {
        List<Mention> found = DocMentions.in(Path.of("x.md"), "a `One`\n```java\nint `Two`;\n```\nb `Three` and `Four`\n");
        assertThat(found).extracting(Mention::toString).containsExactly("x.md:1: `One`", "x.md:5: `Three`", "x.md:5: `Four`");
    }

    @Test
    void theReadsOfTheCodeAreFound() {
        String java = "String a = System.getenv(\"NCCL_HOME\");\nenv.get(\"PATH\");\nset(env, \"VIRTUAL_ENV\");\n"
                + "@Option(defaultValue = \"${env:NODE_RANK:-0}\")\nmap.get(\"NOT_AN_ENV\");\n";
        assertThat(VariableReads.javaReads(Path.of("A.java"), java)).extracting(VariableReads.Read::variable)
                .containsExactly("NCCL_HOME", "PATH", "VIRTUAL_ENV", "NODE_RANK");
        String cpp = "const char* v = std::getenv(\"NCCL_RUNTIME_CONNECT\");\nreturn env_flag(\"TORCH_SYMM_MEM_DISABLE_MULTICAST\");\n";
        assertThat(VariableReads.nativeReads(Path.of("a.cpp"), cpp)).extracting(VariableReads.Read::toString)
                .containsExactly("a.cpp:1 reads NCCL_RUNTIME_CONNECT", "a.cpp:2 reads TORCH_SYMM_MEM_DISABLE_MULTICAST");
    }

    private static List<String> offending(Function<String, Optional<String>> problem) {
        List<String> found = new ArrayList<>();
        for (Mention m : mentions) {
            problem.apply(m.text()).ifPresent(why -> found.add(m + ": " + why));
        }
        return found;
    }

    /** A variable that some file of the project's tooling names, as a whole word. */
    private static Predicate<String> readByTooling() {
        StringBuilder text = new StringBuilder();
        for (Path file : ConfigurationReference.toolingFiles()) {
            try {
                text.append(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1)).append('\n');
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        String all = text.toString();
        return name -> Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(all).find();
    }
}
