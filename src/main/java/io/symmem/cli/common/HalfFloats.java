package io.symmem.cli.common;

/** bf16 / fp16 <-> float conversions (round to nearest even), for the demo and bench. Java 17 has none. */
public final class HalfFloats {
    private HalfFloats() {
    }

    public static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) 0x7fc0;
        }
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }

    public static float fromBf16(short h) {
        return Float.intBitsToFloat((h & 0xffff) << 16);
    }

    public static short toFp16(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int exp = (bits >>> 23) & 0xff;
        int mant = bits & 0x7fffff;
        if (exp == 0xff) {
            return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
        }
        int e = exp - 127 + 15;
        if (e >= 0x1f) {
            return (short) (sign | 0x7c00);
        }
        if (e <= 0) {
            if (e < -10) {
                return (short) sign;
            }
            mant |= 0x800000;
            int shift = 14 - e;
            int half = mant >> shift;
            int rem = mant & ((1 << shift) - 1);
            int mid = 1 << (shift - 1);
            if (rem > mid || (rem == mid && (half & 1) != 0)) {
                half++;
            }
            return (short) (sign | half);
        }
        int half = (e << 10) | (mant >> 13);
        int rem = mant & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (half & 1) != 0)) {
            half++;
        }
        return (short) (sign | half);
    }

    public static float fromFp16(short h) {
        int s = h & 0x8000;
        int e = (h >>> 10) & 0x1f;
        int m = h & 0x3ff;
        float sign = s != 0 ? -1f : 1f;
        if (e == 0) {
            return sign * m * 0x1p-24f;
        }
        if (e == 31) {
            return m == 0 ? sign * Float.POSITIVE_INFINITY : Float.NaN;
        }
        return Float.intBitsToFloat((s << 16) | ((e - 15 + 127) << 23) | (m << 13));
    }

    /** Spacing of representable values of the 16-bit type around |x| (fp16: 10 mantissa bits; bf16: 7). */
    public static double ulpFp16(double x) {
        double a = Math.abs(x);
        if (a < 0x1p-14) {
            return 0x1p-24;
        }
        return Math.scalb(1.0, Math.getExponent(a) - 10);
    }

    public static double ulpBf16(double x) {
        return Math.ulp((float) Math.abs(x)) * 65536.0;
    }
}
