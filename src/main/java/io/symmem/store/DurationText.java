package io.symmem.store;

import java.time.Duration;

/** Formats deadlines for error messages the way people say them: "2 s", "250 ms". */
public final class DurationText {

    private DurationText() {}

    public static String of(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? (millis / 1000) + " s" : millis + " ms";
    }
}
