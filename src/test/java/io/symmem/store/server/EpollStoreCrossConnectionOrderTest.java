package io.symmem.store.server;

import io.symmem.store.VertxTest;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.BeforeAll;

/**
 * The same ordering check with Vert.x, and so the store's own loop, on Netty's epoll transport (what
 * the service runs on): edge-triggered epoll reports ready sockets differently from the JDK's selector.
 */
class EpollStoreCrossConnectionOrderTest extends StoreCrossConnectionOrderTest {

    /** Hides {@link VertxTest#startVertx()}: JUnit then runs only this one. */
    @BeforeAll
    static void startVertx() {
        vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
        if (!vertx.isNativeTransportEnabled()) {
            throw new IllegalStateException("Netty's epoll transport did not load: " + vertx.unavailableNativeTransportCause());
        }
    }
}
