package io.symmem.store;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.startServer;
import static org.assertj.core.api.Assertions.assertThat;

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

    private static final int SET = 1, CHECK = 5, GET = 3;
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

    @Test
    void setOnOneConnectionIsSeenByTheNextGetOnAnotherUnderLoad() throws Exception {
        StoreServer server = startServer(vertx);
        List<RawConnection> setters = new ArrayList<>();
        try (RawConnection checker = new RawConnection(server.port()).validate()) {
            for (int c = 0; c < 8; c++) {
                setters.add(new RawConnection(server.port()).validate());
            }
            int misses = 0;
            for (int i = 0; i < ROUNDS; i++) {
                RawConnection setter = setters.get(i % setters.size());
                String key = "/load/" + i;
                setter.send(string(string(frame(SET), key), "v" + i));
                checker.send(string(frame(GET), key));
                if (!new String(checker.readVector()).equals("v" + i)) {
                    misses++;
                }
            }
            // The server applies requests in the order it reads them (the strict test above). With eight
            // writers on a loaded machine the kernel itself may deliver loopback segments of different
            // sockets out of order (seen: 2 of 2000 while a parallel build loaded both cores), so this
            // bound allows that and no more: the unordered server missed 39 of 2000 here, 126 on the GPU host.
            assertThat(misses).as("gets that did not see the set just written on another connection").isLessThanOrEqualTo(ROUNDS / 400);
        } finally {
            for (RawConnection setter : setters) {
                setter.close();
            }
            server.close();
        }
    }
}
