package io.symmem.cli;

import io.symmem.cli.common.ExitStatus;
import io.symmem.config.EffectiveSetting;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfigLoader;
import io.symmem.nativ.NativeTunables;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "config", description = "Shows symmem's own variables and torchrun's (the native library's tunables included), "
        + "each one's value and where it came from, then validates them (exit status 2 when one is invalid). Runs without "
        + "starting the application, so that it shows invalid values too.")
public class ConfigCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        List<EffectiveSetting> settings = SymmemConfigLoader.effective(System.getenv(), System.getProperties());
        Optional<List<NativeTunables.Tunable>> tunables = nativeTunables();
        List<String[]> rows = new ArrayList<>();
        for (EffectiveSetting s : settings) {
            rows.add(new String[] {s.variable(), s.value(), s.source(), s.allowed()});
        }
        for (NativeTunables.Tunable t : tunables.orElse(List.of())) {
            String value = System.getenv(t.name());
            boolean set = value != null && !value.isEmpty();
            rows.add(new String[] {t.name(), set ? value : "(default)", set ? "environment" : "native " + t.backend()
                    + " default", t.allowed()});
        }
        int width = rows.stream().mapToInt(r -> r[0].length()).max().orElse(8);
        String format = "%-" + width + "s %-22s %-22s %s%n";
        System.out.printf(format, "VARIABLE", "VALUE", "SOURCE", "ALLOWED");
        rows.forEach(r -> System.out.printf(format, (Object[]) r));

        List<String> problems = new ArrayList<>();
        try {
            SymmemConfigLoader.fromProcess();
        } catch (InvalidConfigurationException e) {
            problems.add(e.getMessage());
        }
        tunables.orElse(List.of()).forEach(t -> t.problem().ifPresent(problems::add));
        if (!problems.isEmpty()) {
            problems.forEach(System.out::println);
            return ExitStatus.CONFIG;
        }
        System.out.println("configuration is valid");
        return 0;
    }

    /** Empty (with a line saying why) where libsymmem cannot be loaded: the rest of the listing still helps. */
    private static Optional<List<NativeTunables.Tunable>> nativeTunables() {
        try {
            return Optional.of(NativeTunables.list());
        } catch (LinkageError e) {
            System.out.println("native tunables not listed: libsymmem could not be loaded (" + e.getMessage() + ")");
            return Optional.empty();
        }
    }
}
