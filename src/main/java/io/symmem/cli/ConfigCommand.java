package io.symmem.cli;

import io.symmem.config.EffectiveSetting;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfigLoader;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "config", description = "Shows every variable symmem reads, its value and where it came from, then "
        + "validates them (exit status 2 when one is invalid). Runs without starting the application, so that it "
        + "shows invalid values too.")
public class ConfigCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        List<EffectiveSetting> settings = SymmemConfigLoader.effective(System.getenv(), System.getProperties());
        int width = settings.stream().mapToInt(s -> s.variable().length()).max().orElse(8);
        String row = "%-" + width + "s %-22s %-22s %s%n";
        System.out.printf(row, "VARIABLE", "VALUE", "SOURCE", "ALLOWED");
        for (EffectiveSetting s : settings) {
            System.out.printf(row, s.variable(), s.value(), s.source(), s.allowed());
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
