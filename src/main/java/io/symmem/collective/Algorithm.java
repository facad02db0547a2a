package io.symmem.collective;

import java.util.Locale;

/** All-reduce algorithms (symmem_algo). AUTO picks by size, world and in/out of place. */
public enum Algorithm {
    AUTO(0, "auto"), ONE_SHOT(1, "one-shot"), TWO_SHOT(2, "two-shot");

    private final int code;
    private final String id;

    Algorithm(int code, String id) {
        this.code = code;
        this.id = id;
    }

    public int code() {
        return code;
    }

    /** auto, one-shot or two-shot. */
    public String id() {
        return id;
    }

    static Algorithm ofCode(int code) {
        for (Algorithm a : values()) {
            if (a.code == code) {
                return a;
            }
        }
        throw new IllegalStateException("unknown algorithm code " + code);
    }

    /** Accepts auto, one-shot, two-shot (also one_shot, oneshot), any case. */
    public static Algorithm parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (Algorithm a : values()) {
            if (a.id.equals(t) || a.id.replace("-", "").equals(t)) {
                return a;
            }
        }
        throw new IllegalArgumentException("algorithm '" + text + "' is unknown; use auto, one-shot or two-shot");
    }
}
