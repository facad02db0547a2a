package io.symmem.cli.common;

/** The exit statuses every symmem command shares. */
public final class ExitStatus {
    /** A setting (variable or option) that is not allowed, or a port that is taken: one line on stderr says which. */
    public static final int CONFIG = 2;

    private ExitStatus() {
    }
}
