package io.symmem.store.server;

import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.HOST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.StoreException;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A store restarted on its port waits for the port to be free again, then fails naming it. */
@Timeout(30)
class StoreServerBindTest extends VertxTest {

    @Test
    void listenWaitsForAPortThatIsFreedShortly() throws Exception {
        waitsForAPortThatIsFreedShortly(vertx);
    }

    @Test
    void onTheEpollTransportTooListenWaitsForAPortThatIsFreedShortly() throws Exception {
        // What the application runs on Linux (quarkus.vertx.prefer-native-transport): epoll's bind failure is
        // Netty's own exception, not a BindException.
        Vertx epoll = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        try {
            assertThat(epoll.isNativeTransportEnabled()).as("epoll transport available").isTrue();
            waitsForAPortThatIsFreedShortly(epoll);
        } finally {
            epoll.close().toCompletionStage().toCompletableFuture().join();
        }
    }

    private static void waitsForAPortThatIsFreedShortly(Vertx on) throws Exception {
        ServerSocket holder = new ServerSocket(0, 1, InetAddress.getByName(HOST));
        int port = holder.getLocalPort();
        StoreServer server = new StoreServer(on, HOST, port);
        try {
            var listening = server.start().subscribeAsCompletionStage();
            Thread.sleep(300);
            assertThat(listening).as("still waiting for the port").isNotDone();
            holder.close();
            assertThat(listening.get(AWAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(port);
        } finally {
            holder.close();
            server.close();
        }
    }

    @Test
    void listenFailsNamingTheAddressWhenThePortStaysTaken() throws Exception {
        try (ServerSocket holder = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            StoreServer server = new StoreServer(vertx, HOST, holder.getLocalPort());
            assertThatThrownBy(() -> server.start().await().atMost(StoreServer.BIND_RETRY.plus(Duration.ofSeconds(5))))
                    .isInstanceOf(StoreException.class)
                    .hasMessageContaining("could not bind " + HOST + ":" + holder.getLocalPort());
        }
    }
}
