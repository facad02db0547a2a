package io.symmem.store.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SelfConnectionTest {
    @Test
    void onlyTheSamePortOnTheSameAddressIsASelfConnection() {
        assertThat(SelfConnection.is(35171, 35171, "127.0.0.1", "127.0.0.1")).isTrue();
        assertThat(SelfConnection.is(35170, 35171, "127.0.0.1", "127.0.0.1")).isFalse();
        assertThat(SelfConnection.is(35171, 35171, "127.0.0.2", "127.0.0.1")).isFalse();
        assertThat(SelfConnection.error("127.0.0.1:35171")).hasMessageContaining("127.0.0.1:35171");
    }
}
