package io.symmem.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * A Python virtual environment with PyTorch's CPU build, made once per build under target/: what a
 * user of torchrun has. Made with the machine's own pip configuration (PyPI, or a local mirror);
 * where none has PyTorch, the tests that need it are skipped, saying so and showing pip's last words.
 */
final class TorchVenv {
    static final String TORCH = "torch==2.13.0";
    private static final Path DIR = Path.of("target", "torch-venv").toAbsolutePath();

    private TorchVenv() {
    }

    /** The venv's directory, made (about 20 s from a local mirror) if it is not there yet. */
    static synchronized Path ensure() throws IOException, InterruptedException {
        Path python = DIR.resolve("bin/python");
        if (Files.isExecutable(DIR.resolve("bin/torchrun")) && run(List.of(python.toString(), "-c", "import torch")).exit() == 0) {
            return DIR;
        }
        ExternalCommand venv = run(List.of("python3", "-m", "venv", "--clear", DIR.toString()));
        Assumptions.assumeTrue(venv.exit() == 0, "skipped: python3 -m venv failed (install python3 and python3-venv): " + tail(venv.out()));
        // No retries against an index that cannot be reached: a mirror pip is configured with still serves.
        ExternalCommand pip = run(List.of(DIR.resolve("bin/pip").toString(), "install", "--quiet", "--retries", "0",
                "--timeout", "10", TORCH));
        Assumptions.assumeTrue(pip.exit() == 0, "skipped: pip could not install " + TORCH + " from this machine's indexes: "
                + tail(pip.out()));
        return DIR;
    }

    private static ExternalCommand run(List<String> command) throws IOException, InterruptedException {
        return ExternalCommand.run(command, Path.of("."), 600);
    }

    private static String tail(String out) {
        String trimmed = out.strip();
        return trimmed.length() <= 600 ? trimmed : "..." + trimmed.substring(trimmed.length() - 600);
    }
}
