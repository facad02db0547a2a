package io.symmem.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A store failure keeps its type across the event bus, so callers there see what a direct store throws. */
class StoreBusMessagesTest {

    @Test
    void aDroppedConnectionStaysADroppedConnection() {
        RuntimeException back = StoreBusMessages.exceptionOf(
                StoreBusMessages.error(new StoreConnectionLostException("connection to store 127.0.0.1:1 lost")));
        assertThat(back).isInstanceOf(StoreConnectionLostException.class).hasMessage("connection to store 127.0.0.1:1 lost");
    }

    @Test
    void aTimeoutKeepsItsKeysAndAPlainFailureStaysPlain() {
        RuntimeException timeout = StoreBusMessages.exceptionOf(
                StoreBusMessages.error(new StoreTimeoutException("no key 'a' within 1 s", List.of("a"))));
        assertThat(timeout).isInstanceOf(StoreTimeoutException.class);
        assertThat(((StoreTimeoutException) timeout).keys()).containsExactly("a");
        RuntimeException plain = StoreBusMessages.exceptionOf(StoreBusMessages.error(new StoreException("refused")));
        assertThat(plain).isExactlyInstanceOf(StoreException.class).hasMessage("refused");
    }
}
