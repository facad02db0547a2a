package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.cli.common.ByteSizeConverter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Size options read through ByteSize; a bad value is one line naming the option, exit status 2. */
class OptionErrorHandlerTest {

    @Command(name = "sized")
    static class Sized implements Runnable {
        @Option(names = "--sizes", split = ",", converter = ByteSizeConverter.class)
        List<Long> sizes;

        @Option(names = "--value-bytes", converter = ByteSizeConverter.ToInt.class)
        Integer valueBytes;

        @Override
        public void run() {
        }
    }

    private record Outcome(int exit, String err, Sized command) {}

    private static Outcome run(String... args) {
        Sized sized = new Sized();
        CommandLine line = new CommandLine(sized);
        StringWriter err = new StringWriter();
        line.setErr(new PrintWriter(err));
        line.setParameterExceptionHandler(new OptionErrorHandler(line.getParameterExceptionHandler()));
        return new Outcome(line.execute(args), err.toString(), sized);
    }

    @Test
    void sizesWithUnitsAreReadExactly() {
        Outcome ok = run("--sizes", "4096,4KiB,4KB,1MB,1TiB", "--value-bytes", "64KiB");
        assertThat(ok.exit()).isZero();
        assertThat(ok.command().sizes).containsExactly(4096L, 4096L, 4000L, 1_000_000L, 1L << 40);
        assertThat(ok.command().valueBytes).isEqualTo(65536);
    }

    @Test
    void aBadSizeIsOneLineNamingTheOptionAndTheValue() {
        Outcome bad = run("--sizes", "4KiB,1XB");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).startsWith("sized: --sizes: '1XB' is not a size (unknown unit 'XB'): use a whole number")
                .endsWith(System.lineSeparator());
        assertThat(bad.err().lines()).hasSize(1);
    }

    @Test
    void zeroAndValuesPastTheTargetTypeAreRefused() {
        assertThat(run("--sizes", "0").err()).contains("--sizes: '0' is less than 1 byte");
        assertThat(run("--value-bytes", "2GiB").err()).contains("--value-bytes: '2GiB' is more than 2147483647 bytes");
        assertThat(run("--sizes", "16EiB").exit()).isEqualTo(2);
    }

    @Test
    void otherMistakesKeepPicocliHandling() {
        Outcome unknown = run("--nope");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("Unknown option: '--nope'").contains("Usage: sized");
    }
}
