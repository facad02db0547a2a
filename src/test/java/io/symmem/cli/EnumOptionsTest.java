package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.cli.bench.AllReduceBenchCommand;
import io.symmem.cli.bench.PoolBenchCommand;
import io.symmem.collective.Algorithm;
import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/**
 * The dtype, algorithm, reduction and chaos phase options of the real commands: read by their
 * converters as the command line is parsed, so that a bad value stops the command before it does
 * anything (a rank before it joins), in one line that names the option and what it accepts.
 */
class EnumOptionsTest {
    private record Outcome(int exit, String err) {}

    /** Runs the command as far as picocli goes: a bad value ends here; a good one would reach call(). */
    private static Outcome refused(Object command, String... args) {
        CommandLine line = new CommandLine(command);
        StringWriter err = new StringWriter();
        line.setErr(new PrintWriter(err));
        line.setParameterExceptionHandler(new OptionErrorHandler(line.getParameterExceptionHandler()));
        line.setExecutionStrategy(parsed -> {
            throw new AssertionError("a refused value must not reach the command");
        });
        return new Outcome(line.execute(args), err.toString());
    }

    private static <T> T parsed(T command, String... args) {
        ParseResult result = new CommandLine(command).parseArgs(args);
        assertThat(result.errors()).isEmpty();
        return command;
    }

    @Test
    void demoReadsDtypeAndAlgorithmWithTheirDefaults() {
        DemoCommand defaults = parsed(new DemoCommand());
        assertThat(defaults.dtype).isEqualTo(DType.FLOAT32);
        assertThat(defaults.algo).isEqualTo(Algorithm.AUTO);
        DemoCommand chosen = parsed(new DemoCommand(), "--dtype", "BFloat16", "--algo", "two_shot");
        assertThat(chosen.dtype).isEqualTo(DType.BFLOAT16);
        assertThat(chosen.algo).isEqualTo(Algorithm.TWO_SHOT);
    }

    @Test
    void aBadDtypeOrAlgorithmIsOneLineNamingTheOptionAndTheAcceptedValues() {
        Outcome dtype = refused(new DemoCommand(), "--dtype", "fp8");
        assertThat(dtype.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(dtype.err()).isEqualTo("demo: --dtype: dtype 'fp8' is unknown; use fp32, bf16 or fp16" + System.lineSeparator());
        Outcome algo = refused(new DemoCommand(), "--algo", "three-shot");
        assertThat(algo.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(algo.err()).isEqualTo("demo: --algo: algorithm 'three-shot' is unknown; use auto, one-shot, two-shot or two-shot-ce"
                + System.lineSeparator());
        Outcome inPlaceOnly = refused(new DemoCommand(), "--algo", "two-shot-ce");
        assertThat(inPlaceOnly.exit()).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(inPlaceOnly.err()).isEqualTo("demo: --algo: two-shot-ce reduces in place only, and this command reduces out of "
                + "place; use auto, one-shot or two-shot (bench allreduce --in-place --algos two-shot-ce runs it)" + System.lineSeparator());
    }

    @Test
    void benchAllreduceReadsDtypeOpAndAlgorithmList() {
        AllReduceBenchCommand defaults = parsed(new AllReduceBenchCommand());
        assertThat(defaults).extracting("dtype", "op").containsExactly(DType.BFLOAT16, ReduceOp.SUM);
        assertThat(defaults).extracting("algos").asList().containsExactly(Algorithm.ONE_SHOT, Algorithm.TWO_SHOT, Algorithm.AUTO);
        AllReduceBenchCommand chosen = parsed(new AllReduceBenchCommand(), "--dtype", "fp16", "--op", "MAX", "--algos", "oneshot");
        assertThat(chosen).extracting("dtype", "op").containsExactly(DType.FLOAT16, ReduceOp.MAX);
        assertThat(chosen).extracting("algos").asList().containsExactly(Algorithm.ONE_SHOT);
    }

    @Test
    void benchAllreduceRefusesABadOpAndABadAlgorithmInTheList() {
        assertThat(refused(new AllReduceBenchCommand(), "--op", "prod").err())
                .isEqualTo("allreduce: --op: reduction 'prod' is unknown; use sum, avg, max, min" + System.lineSeparator());
        assertThat(refused(new AllReduceBenchCommand(), "--algos", "auto,nccl").err())
                .startsWith("allreduce: --algos: algorithm 'nccl' is unknown");
    }

    @Test
    void benchPoolLeavesTheDtypeToTheBackendUnlessGivenAndRefusesABadOne() {
        assertThat(parsed(new PoolBenchCommand())).extracting("dtype").isNull();
        assertThat(parsed(new PoolBenchCommand(), "--dtype", "fp32")).extracting("dtype").isEqualTo(DType.FLOAT32);
        assertThat(refused(new PoolBenchCommand(), "--dtype", "int8").err()).startsWith("pool: --dtype: dtype 'int8' is unknown");
    }

    @Test
    void chaosReadsPhasesAndSizeBeforeItStartsAnyRank() {
        ChaosCommand chaos = parsed(new ChaosCommand(), "--phases", "store,IDLE", "--size", "64KiB");
        assertThat(chaos.phases).containsExactly(ChaosPhase.STORE, ChaosPhase.IDLE);
        assertThat(chaos.size).isEqualTo(65536);
        assertThat(refused(new ChaosCommand(), "--phases", "store,nap").err())
                .isEqualTo("chaos: --phases: unknown phase 'nap': use one of rendezvous, collective, barrier, store, idle"
                        + System.lineSeparator());
        assertThat(refused(new ChaosCommand(), "--size", "1XB").err()).startsWith("chaos: --size: '1XB' is not a size");
        assertThat(parsed(new ChaosRankCommand(), "--phase", "barrier").phase).isEqualTo(ChaosPhase.BARRIER);
        assertThat(refused(new ChaosRankCommand(), "--phase", "nap").err()).startsWith("chaos-rank: --phase: unknown phase 'nap'");
    }
}
