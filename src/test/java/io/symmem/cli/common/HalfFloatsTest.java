package io.symmem.cli.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HalfFloatsTest {
    @Test
    void bf16AndFp16RoundTripAndRoundToNearestEven() {
        assertThat(HalfFloats.toBf16(1.0f)).isEqualTo((short) 0x3f80);
        assertThat(HalfFloats.fromBf16((short) 0xc000)).isEqualTo(-2.0f);
        assertThat(HalfFloats.toFp16(1.0f)).isEqualTo((short) 0x3c00);
        assertThat(HalfFloats.toFp16(-2.0f)).isEqualTo((short) 0xc000);
        assertThat(HalfFloats.toFp16(65504f)).isEqualTo((short) 0x7bff);
        assertThat(HalfFloats.toFp16(1e6f)).isEqualTo((short) 0x7c00);
        assertThat(HalfFloats.fromFp16((short) 0x0001)).isEqualTo(0x1p-24f);
        assertThat(HalfFloats.toFp16(0x1p-24f)).isEqualTo((short) 0x0001);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
        assertThat(HalfFloats.toFp16(1f + 0x1p-11f)).isEqualTo((short) 0x3c00);
        for (float f = -3f; f < 3f; f += 0.001f) {
            float h = HalfFloats.fromFp16(HalfFloats.toFp16(f));
            assertThat((double) Math.abs(h - f)).isLessThanOrEqualTo(HalfFloats.ulpFp16(f) / 2 + 1e-12);
            float b = HalfFloats.fromBf16(HalfFloats.toBf16(f));
            assertThat((double) Math.abs(b - f)).isLessThanOrEqualTo(HalfFloats.ulpBf16(f) / 2 + 1e-12);
        }
    }
}
