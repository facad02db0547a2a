package io.symmem.collective;

import java.util.Locale;

/** Element types of the collectives (symmem_dtype). bf16/fp16 travel as raw 16-bit values (short[]). */
public enum DType {
    FLOAT32(0, 4, "fp32"), BFLOAT16(1, 2, "bf16"), FLOAT16(2, 2, "fp16");

    private final int code;
    private final int bytes;
    private final String shortName;

    DType(int code, int bytes, String shortName) {
        this.code = code;
        this.bytes = bytes;
        this.shortName = shortName;
    }

    /** The symmem.h enum value. */
    public int code() {
        return code;
    }

    public int bytes() {
        return bytes;
    }

    /** fp32, bf16 or fp16. */
    public String shortName() {
        return shortName;
    }

    /** Accepts fp32/bf16/fp16 and float32/bfloat16/float16, any case. */
    public static DType parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (DType d : values()) {
            if (d.shortName.equals(t) || d.name().toLowerCase(Locale.ROOT).equals(t)) {
                return d;
            }
        }
        throw new IllegalArgumentException("dtype '" + text + "' is unknown; use fp32, bf16 or fp16");
    }
}
