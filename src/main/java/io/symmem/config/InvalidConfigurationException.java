package io.symmem.config;

import java.util.List;

/** Start-up configuration is wrong; each problem names the variable, its value and what is allowed. */
public class InvalidConfigurationException extends RuntimeException {
    private final List<String> problems;

    public InvalidConfigurationException(List<String> problems) {
        super("invalid configuration:\n  - " + String.join("\n  - ", problems));
        this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
        return problems;
    }
}
