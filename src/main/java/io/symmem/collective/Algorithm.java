package io.symmem.collective;

import java.util.Locale;

/**
 * All-reduce algorithms (symmem_algo). AUTO picks by size, world and in/out of place. TWO_SHOT_CE is a
 * two-shot whose data the GPUs' copy engines move (cuda and nccl backends, world 2, in place, on a
 * buffer with copy-engine scratch); where it cannot run, the call fails with the reason.
 */
public enum Algorithm {
    AUTO(0, "auto"), ONE_SHOT(1, "one-shot"), TWO_SHOT(2, "two-shot"), TWO_SHOT_CE(3, "two-shot-ce");

    private final int code;
    private final String id;

    Algorithm(int code, String id) {
        this.code = code;
        this.id = id;
    }

    public int code() {
        return code;
    }

    /** auto, one-shot, two-shot or two-shot-ce. */
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

    /** Accepts auto, one-shot, two-shot, two-shot-ce (also one_shot, oneshot), any case. */
    public static Algorithm parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (Algorithm a : values()) {
            if (a.id.equals(t) || a.id.replace("-", "").equals(t)) {
                return a;
            }
        }
        throw new IllegalArgumentException("algorithm '" + text + "' is unknown; use auto, one-shot, two-shot or two-shot-ce");
    }
}
