package io.symmem.store;

import java.time.Duration;

/** Formats deadlines for error messages the way people say them: "2 s", "250 ms". */
final class DurationText {

    private DurationText() {}

    static String of(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? (millis / 1000) + " s" : millis + " ms";
    }
}
