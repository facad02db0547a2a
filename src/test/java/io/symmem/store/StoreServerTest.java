package io.symmem.store;

import static io.symmem.store.StoreTestSupport.startServer;

import io.symmem.store.server.StoreServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A fresh store server on loopback for every test, on the class's Vert.x instance. */
public abstract class StoreServerTest extends VertxTest {
    protected StoreServer server;

    @BeforeEach
    void startStoreServer() {
        server = startServer(vertx);
    }

    @AfterEach
    void stopStoreServer() {
        server.close();
    }
}
