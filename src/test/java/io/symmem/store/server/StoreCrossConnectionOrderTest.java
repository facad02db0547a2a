package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.startServer;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.StoreTestSupport;
import io.symmem.store.VertxTest;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A SET has no answer, so a client that sets on one connection and then checks on another relies on
 * the server applying requests in the order it reads them from its sockets (as PyTorch's
 * single-threaded libuv server does). Hand-made frames, no client library in between.
 */
@Timeout(60)
class StoreCrossConnectionOrderTest extends VertxTest {

    private static final int SET = 1, CHECK = 5, GET = 3, PING = 13;
    private static final int ROUNDS = 2000;

    @Test
    void setOnOneConnectionIsSeenByTheNextCheckOnAnother() throws Exception {
        StoreServer server = startServer(vertx);
        try (RawConnection setter = new RawConnection(server.port()).validate();
                RawConnection checker = new RawConnection(server.port()).validate()) {
            List<Integer> misses = new ArrayList<>();
            for (int i = 0; i < ROUNDS; i++) {
                String key = "/order/" + i;
                setter.send(string(string(frame(SET), key), "v"));
                checker.send(string(frame(CHECK).putLong(1), key));
                if (checker.readByte() != 0) {
                    misses.add(i);
                }
            }
            assertThat(misses).as("checks that did not see the set just written on another connection").isEmpty();
        } finally {
            server.close();
        }
    }

    /**
     * Eight writers: which of several ready sockets the kernel reports first is not promised, so a set
     * with no answer may be read after a get sent later on another socket. A PING answered on the
     * setter's connection proves the server has read the set; from then on every connection must see it.
     */
    @Test
    void setOnOneConnectionIsSeenByTheNextGetOnAnotherUnderLoad() throws Exception {
        StoreServer server = startServer(vertx);
        List<RawConnection> setters = new ArrayList<>();
        try (RawConnection checker = new RawConnection(server.port()).validate()) {
            for (int c = 0; c < 8; c++) {
                setters.add(new RawConnection(server.port()).validate());
            }
            List<Integer> misses = new ArrayList<>();
            for (int i = 0; i < ROUNDS; i++) {
                RawConnection setter = setters.get(i % setters.size());
                String key = "/load/" + i;
                setter.send(string(string(frame(SET), key), "v" + i));
                setter.send(frame(PING).putInt(i));
                assertThat(setter.readInt()).as("PING nonce of round %d", i).isEqualTo(i);
                checker.send(string(frame(GET), key));
                if (!new String(checker.readVector()).equals("v" + i)) {
                    misses.add(i);
                }
            }
            assertThat(misses).as("gets that did not see a set the server had already answered a later PING for").isEmpty();
        } finally {
            for (RawConnection setter : setters) {
                setter.close();
            }
            server.close();
        }
    }
}
