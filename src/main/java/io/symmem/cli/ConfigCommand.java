package io.symmem.cli;

import io.symmem.config.EffectiveSetting;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfigLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "config", description = "Shows every variable symmem reads, its value and where it came from, then validates them.")
public class ConfigCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        System.out.printf("%-26s %-22s %-22s %s%n", "VARIABLE", "VALUE", "SOURCE", "ALLOWED");
        for (EffectiveSetting s : SymmemConfigLoader.effective(System.getenv(), System.getProperties())) {
            System.out.printf("%-26s %-22s %-22s %s%n", s.variable(), s.value(), s.source(), s.allowed());
        }
        try {
            SymmemConfigLoader.fromProcess();
            System.out.println("configuration is valid");
            return 0;
        } catch (InvalidConfigurationException e) {
            System.out.println(e.getMessage());
            return SymmemMain.EXIT_CONFIG;
        }
    }
}
