package io.symmem.cli;

import io.symmem.nativ.NativeCore;
import picocli.CommandLine.IVersionProvider;

public class VersionProvider implements IVersionProvider {
    @Override
    public String[] getVersion() {
        return new String[] {"symmem " + NativeCore.version() + " (native ABI " + NativeCore.abiVersion()
                + ", CUDA " + (NativeCore.builtWithCuda() ? "built in" : "not built") + ")"};
    }
}
