package io.symmem.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BlockingStoreClientSpinTest {
    @Test
    void spinIsOffUnlessSetAndABadValueIsNamed() {
        assertThat(BlockingStoreClient.spinMicros(null)).isZero();
        assertThat(BlockingStoreClient.spinMicros(" ")).isZero();
        assertThat(BlockingStoreClient.spinMicros("50")).isEqualTo(50);
        assertThatThrownBy(() -> BlockingStoreClient.spinMicros("fast"))
                .hasMessageContaining("SYMMEM_STORE_SPIN_MICROS=fast is invalid");
        assertThatThrownBy(() -> BlockingStoreClient.spinMicros("-1"))
                .hasMessageContaining("SYMMEM_STORE_SPIN_MICROS=-1 is invalid");
    }
}
