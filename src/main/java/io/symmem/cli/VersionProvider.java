package io.symmem.cli;

import io.symmem.nativ.NativeCore;
import java.lang.management.ManagementFactory;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code symmem --version}: the build, the native core, and the Java runtime it runs on (with or without an
 * AOT cache). Picocli also asks for the version while it builds the command tree (it copies it into every
 * command), before anything is parsed; that answer is never printed, so it stays a placeholder: reading
 * the native core's version there would load libsymmem on the thread that builds the tree, on every start
 * of every command, whether or not it needs the library.
 */
public class VersionProvider implements IVersionProvider {
    @Spec
    CommandSpec spec;

    @Override
    public String[] getVersion() {
        if (spec == null || spec.commandLine() == null || spec.commandLine().getParseResult() == null) {
            return new String[] {"symmem"};
        }
        String aot = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("-XX:AOTCache=")).map(a -> "AOT cache " + a.substring("-XX:AOTCache=".length()))
                .findFirst().orElse("no AOT cache");
        return new String[] {"symmem " + NativeCore.version() + " (native ABI " + NativeCore.abiVersion()
                + ", CUDA " + (NativeCore.builtWithCuda() ? "built in" : "not built") + ")",
                "runtime: Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ", "
                        + System.getProperty("java.vendor") + ") at " + System.getProperty("java.home") + "; " + aot};
    }
}
