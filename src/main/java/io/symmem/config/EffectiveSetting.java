package io.symmem.config;

import io.smallrye.config.ConfigValue;
import io.smallrye.config.SmallRyeConfig;
import java.util.ArrayList;
import java.util.List;

/** One row of the effective configuration: variable, value and the source that set it. */
public record EffectiveSetting(String variable, String property, String value, String source, String allowed) {

    static List<EffectiveSetting> of(SmallRyeConfig config) {
        List<EffectiveSetting> rows = new ArrayList<>();
        for (ConfigVariable variable : ConfigVariable.values()) {
            ConfigValue value = config.getConfigValue(variable.property());
            String source = value.getSourceName();
            boolean isDefault = source == null || source.contains("Default");
            // Unset means unset (the code or the vendor's library decides what that does), except where the
            // value is really another variable's.
            String unset = variable.derivedFrom().map(from -> "(derived from " + from.name() + ")").orElse("(unset)");
            String shown = value.getRawValue() != null ? (variable.isSecret() ? variable.displayed(value.getRawValue()) : value.getRawValue())
                    : unset;
            String from = value.getRawValue() == null ? (variable.derivedFrom().isPresent() ? "derived" : "not set")
                    : isDefault ? "default" : source;
            rows.add(new EffectiveSetting(variable.name(), variable.property(), shown, from, variable.allowed()));
        }
        return rows;
    }
}
