package io.symmem.scripts;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** The programs the scripts' tests run, and whether this machine has them. */
final class Tools {
    private Tools() {}

    /** True when {@code tool --version} runs and exits 0 within 10 s. */
    static boolean present(String tool) {
        try {
            Process p = new ProcessBuilder(tool, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
