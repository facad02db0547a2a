package io.symmem.cli;

import io.symmem.nativ.NativeCore;
import java.lang.management.ManagementFactory;
import picocli.CommandLine.IVersionProvider;

/** {@code symmem --version}: the build, the native core, and the Java runtime it runs on (with or without an AOT cache). */
public class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String aot = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("-XX:AOTCache=")).map(a -> "AOT cache " + a.substring("-XX:AOTCache=".length()))
                .findFirst().orElse("no AOT cache");
        return new String[] {"symmem " + NativeCore.version() + " (native ABI " + NativeCore.abiVersion()
                + ", CUDA " + (NativeCore.builtWithCuda() ? "built in" : "not built") + ")",
                "runtime: Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ", "
                        + System.getProperty("java.vendor") + ") at " + System.getProperty("java.home") + "; " + aot};
    }
}
