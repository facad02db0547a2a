package io.symmem.nccl;

import io.symmem.collective.DType;
import java.util.Locale;

/**
 * Element types of NCCL collectives, with NCCL's own ncclDataType_t values. A separate enum rather
 * than more {@link DType} constants: DType is what symmem's own symmetric kernels reduce (fp32, bf16,
 * fp16, with symmem.h's numbering), and every switch over it would otherwise grow cases those kernels
 * cannot run; {@link #of(DType)} bridges the shared three.
 */
public enum NcclDataType {
    INT8(0, 1, "int8"), UINT8(1, 1, "uint8"), INT32(2, 4, "int32"), INT64(4, 8, "int64"),
    FLOAT16(6, 2, "fp16"), FLOAT32(7, 4, "fp32"), FLOAT64(8, 8, "fp64"), BFLOAT16(9, 2, "bf16");

    private final int code;
    private final int bytes;
    private final String shortName;

    NcclDataType(int code, int bytes, String shortName) {
        this.code = code;
        this.bytes = bytes;
        this.shortName = shortName;
    }

    /** The ncclDataType_t value. */
    public int code() {
        return code;
    }

    public int bytes() {
        return bytes;
    }

    public String shortName() {
        return shortName;
    }

    public boolean isFloatingPoint() {
        return this == FLOAT16 || this == FLOAT32 || this == FLOAT64 || this == BFLOAT16;
    }

    public static NcclDataType of(DType dtype) {
        return switch (dtype) {
            case FLOAT32 -> FLOAT32;
            case BFLOAT16 -> BFLOAT16;
            case FLOAT16 -> FLOAT16;
        };
    }

    /** fp64, fp32, fp16, bf16, int8, uint8, int32, int64 (or the enum names), any case. */
    public static NcclDataType parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (NcclDataType d : values()) {
            if (d.shortName.equals(t) || d.name().toLowerCase(Locale.ROOT).equals(t)) {
                return d;
            }
        }
        throw new IllegalArgumentException("dtype '" + text + "' is unknown; use fp64, fp32, fp16, bf16, int8, uint8, int32 or int64");
    }
}
