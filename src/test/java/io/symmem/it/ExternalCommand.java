package io.symmem.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program that is not symmem (python3, pip, unshare, a script), run to its end with a deadline;
 * stdout and stderr together, through a file, so that a chatty program never blocks on a full pipe.
 */
record ExternalCommand(int exit, String out) {

    /** Exit 127 when the program is not there; 124 past the deadline (it and its children killed). */
    static ExternalCommand run(List<String> command, Path dir, long seconds) throws IOException, InterruptedException {
        Path log = Files.createTempFile("symmem-command-", ".log");
        Process process;
        try {
            process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException missing) {
            return new ExternalCommand(127, String.valueOf(missing.getMessage()));
        }
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            return new ExternalCommand(124, Files.readString(log, StandardCharsets.UTF_8) + "\n(killed after " + seconds + " s)");
        }
        return new ExternalCommand(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    }
}
