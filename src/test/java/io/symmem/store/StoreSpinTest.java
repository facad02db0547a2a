package io.symmem.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StoreSpinTest {
    private static final String CLIENT = StoreSpin.CLIENT_VARIABLE;
    private static final String SERVER = StoreSpin.SERVER_VARIABLE;

    @Test
    void unsetPollsOnlyOnMachinesWithCoresToSpare() {
        assertThat(StoreSpin.micros(CLIENT, null, 2)).isZero();
        assertThat(StoreSpin.micros(CLIENT, null, 4)).isZero();
        assertThat(StoreSpin.micros(CLIENT, null, 8)).isEqualTo(StoreSpin.DEFAULT_MICROS);
        assertThat(StoreSpin.micros(SERVER, null, 64)).isEqualTo(StoreSpin.DEFAULT_MICROS);
    }

    @Test
    void aSetValueWinsOverTheDefault() {
        assertThat(StoreSpin.micros(CLIENT, "0", 64)).isZero();
        assertThat(StoreSpin.micros(SERVER, " 20 ", 2)).isEqualTo(20);
        assertThat(StoreSpin.micros(SERVER, "10000", 2)).isEqualTo(10_000);
    }

    @Test
    void aBadValueIsNamedWithItsVariableAndWhy() {
        assertThatThrownBy(() -> StoreSpin.micros(CLIENT, "fast", 8))
                .hasMessage("SYMMEM_STORE_SPIN_MICROS=fast is invalid: expected microseconds, 0..10000 (not an integer)");
        assertThatThrownBy(() -> StoreSpin.micros(SERVER, "-1", 8))
                .hasMessage("SYMMEM_STORE_SERVER_SPIN_MICROS=-1 is invalid: expected microseconds, 0..10000 (less than 0)");
        assertThatThrownBy(() -> StoreSpin.micros(SERVER, "10001", 8))
                .hasMessage("SYMMEM_STORE_SERVER_SPIN_MICROS=10001 is invalid: expected microseconds, 0..10000 (more than 10000)");
        assertThatThrownBy(() -> StoreSpin.micros(SERVER, "99999999999999999999", 8)).hasMessageEndingWith("(more than 10000)");
        // Empty is not a second way of saying "unset": the same rule as every other variable.
        assertThatThrownBy(() -> StoreSpin.micros(CLIENT, "", 8))
                .hasMessage("SYMMEM_STORE_SPIN_MICROS= is invalid: expected microseconds, 0..10000 (empty)");
    }
}
