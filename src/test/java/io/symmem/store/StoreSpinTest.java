package io.symmem.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StoreSpinTest {
    @Test
    void unsetPollsOnlyOnMachinesWithCoresToSpare() {
        assertThat(StoreSpin.micros(StoreSpin.CLIENT_VARIABLE, null, 2)).isZero();
        assertThat(StoreSpin.micros(StoreSpin.CLIENT_VARIABLE, " ", 4)).isZero();
        assertThat(StoreSpin.micros(StoreSpin.CLIENT_VARIABLE, null, 8)).isEqualTo(StoreSpin.DEFAULT_MICROS);
        assertThat(StoreSpin.micros(StoreSpin.SERVER_VARIABLE, "", 64)).isEqualTo(StoreSpin.DEFAULT_MICROS);
    }

    @Test
    void aSetValueWinsOverTheDefault() {
        assertThat(StoreSpin.micros(StoreSpin.CLIENT_VARIABLE, "0", 64)).isZero();
        assertThat(StoreSpin.micros(StoreSpin.SERVER_VARIABLE, " 20 ", 2)).isEqualTo(20);
    }

    @Test
    void aBadValueIsNamedWithItsVariable() {
        assertThatThrownBy(() -> StoreSpin.micros(StoreSpin.CLIENT_VARIABLE, "fast", 8))
                .hasMessageContaining("SYMMEM_STORE_SPIN_MICROS=fast is invalid");
        assertThatThrownBy(() -> StoreSpin.micros(StoreSpin.SERVER_VARIABLE, "-1", 8))
                .hasMessageContaining("SYMMEM_STORE_SERVER_SPIN_MICROS=-1 is invalid");
        assertThatThrownBy(() -> StoreSpin.micros(StoreSpin.SERVER_VARIABLE, "10001", 8))
                .hasMessageContaining("0..10000");
    }
}
