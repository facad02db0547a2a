package io.symmem.store;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.bytes;
import static io.symmem.store.StoreTestSupport.connect;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.client.TcpStoreClient;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(20)
class CurrentValueTest extends StoreServerTest {

    @Test
    void readsAValueAnEmptyValueOrNoneWithoutWaitingOrChangingAnything() {
        TcpStoreClient client = connect(vertx, server.port());
        try {
            for (Store store : List.of(server.localStore(), client)) {
                store.set("full", bytes("42")).await().atMost(AWAIT);
                store.set("empty", new byte[0]).await().atMost(AWAIT);
                assertThat(CurrentValue.read(store, "full").await().atMost(AWAIT)).hasValueSatisfying(v -> assertThat(v).isEqualTo(bytes("42")));
                assertThat(CurrentValue.read(store, "empty").await().atMost(AWAIT)).hasValueSatisfying(v -> assertThat(v).isEmpty());
                assertThat(CurrentValue.read(store, "absent").await().atMost(AWAIT)).isEqualTo(Optional.empty());
                assertThat(store.check(List.of("absent")).await().atMost(AWAIT)).isFalse();
                assertThat(store.get("full", AWAIT).await().atMost(AWAIT)).isEqualTo(bytes("42"));
            }
        } finally {
            client.close();
        }
    }
}
