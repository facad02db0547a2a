package io.symmem.stress;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** What a rank's lanes did: collectives that were right, wrong results, stalls, other failures. */
final class StressTally {
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong wrong = new AtomicLong();
    private final AtomicLong stalls = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final List<String> reports = new ArrayList<>();

    void count() {
        done.incrementAndGet();
    }

    void wrong(String what) {
        wrong.incrementAndGet();
        report("WRONG " + what);
    }

    /** A deadline that passed is a stall; anything else is a failure. */
    void failed(String what, RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        boolean stall = message.contains("did not arrive") || message.contains("timed out") || message.contains("deadline");
        (stall ? stalls : failures).incrementAndGet();
        report((stall ? "STALL " : "FAILED ") + what + ": " + e);
    }

    /** A misuse that was not refused as it should be. */
    void misuseNotRefused(String what) {
        failures.incrementAndGet();
        report("NOT REFUSED " + what);
    }

    private synchronized void report(String line) {
        reports.add(line);
    }

    long right() {
        return done.get();
    }

    long wrong() {
        return wrong.get();
    }

    long stalls() {
        return stalls.get();
    }

    long failures() {
        return failures.get();
    }

    synchronized List<String> reports() {
        return List.copyOf(reports);
    }

    boolean clean() {
        return wrong() == 0 && stalls() == 0 && failures() == 0;
    }
}
