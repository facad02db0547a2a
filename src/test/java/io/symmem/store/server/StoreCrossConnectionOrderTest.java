package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.startServer;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.RawConnection;
import io.symmem.store.VertxTest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A SET has no answer, so a client that sets on one connection and then reads on another needs proof
 * that the server has read the set: an answer on the setter's connection. From then on every
 * connection must see it. Without that proof the kernel may deliver the read first (on loopback a
 * segment can wait in one CPU's backlog while a later one, sent from another CPU, goes through), so
 * no test here expects order from sockets alone; {@link StoreReadBatchOrderTest} pins the server's
 * order within one read batch. Hand-made frames, no client library in between.
 */
@Timeout(60)
class StoreCrossConnectionOrderTest extends VertxTest {

    private static final int SET = 1, GET = 3, PING = 13;
    private static final int ROUNDS = 2000;

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
