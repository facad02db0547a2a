package io.symmem.cli.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The open-file limit of this process, read from /proc/self/limits (Linux). The JVM raises its soft
 * limit to the hard limit at start-up (-XX:+MaxFDLimit), so what is read here is what applies.
 */
record BenchFdLimit(long soft, long hard) {

    static final long UNKNOWN = -1;

    static BenchFdLimit read() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String[] f = line.substring("Max open files".length()).trim().split("\\s+");
                    return new BenchFdLimit(parse(f[0]), parse(f[1]));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc not mounted: unknown
        }
        return new BenchFdLimit(UNKNOWN, UNKNOWN);
    }

    private static long parse(String s) {
        return "unlimited".equals(s) ? Long.MAX_VALUE : Long.parseLong(s);
    }

    boolean known() {
        return soft != UNKNOWN;
    }

    /** True if {@code needed} descriptors fit (or the limit is unknown). */
    boolean allows(long needed) {
        return !known() || soft >= needed;
    }

    String describe() {
        return known() ? "open-file limit " + text(soft) + " (hard " + text(hard) + ")" : "open-file limit unknown";
    }

    /** What to tell the user when {@code needed} descriptors do not fit. */
    String advice(long needed) {
        return "needs about " + needed + " file descriptors but the " + describe()
                + " is lower: raise it before starting (e.g. `ulimit -n 65536`; as root also `ulimit -Hn 65536`,"
                + " or LimitNOFILE= in a systemd unit, or --ulimit nofile=65536:65536 for docker)";
    }

    private static String text(long v) {
        return v == Long.MAX_VALUE ? "unlimited" : Long.toString(v);
    }
}
