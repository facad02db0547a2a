package io.symmem.store.server;

import static io.symmem.store.RawConnection.frame;
import static io.symmem.store.RawConnection.string;
import static io.symmem.store.StoreTestSupport.AWAIT;
import static io.symmem.store.StoreTestSupport.startServer;
import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.VertxTest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's order across connections within one read batch: what the loop read in one turn is
 * applied answerless requests first, so a CHECK read in the same turn as a SET on another connection
 * sees the set whichever socket was read first. The reads are delivered by hand on the server's loop
 * ({@link HandFedSocket}), so each batch holds exactly what the test puts in it.
 */
@Timeout(60)
class StoreReadBatchOrderTest extends VertxTest {

    private static final int SET = 1, CHECK = 5;
    private static final int READY = 0, NOT_READY = 1;
    private static final int ROUNDS = 200;

    private StoreServer server;
    private final HandFedSocket setter = new HandFedSocket("setter");
    private final HandFedSocket checker = new HandFedSocket("checker");

    @BeforeEach
    void connect() {
        server = startServer(vertx);
        server.onLoop(() -> {
            for (HandFedSocket socket : List.of(setter, checker)) {
                server.accept(socket.socket());
                socket.deliver(frame(0).putInt(0x3C85F7CE)); // VALIDATE
            }
        }).await().atMost(AWAIT);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static ByteBuffer set(String key) {
        return string(string(frame(SET), key), "v");
    }

    private static ByteBuffer check(String key) {
        return string(frame(CHECK).putLong(1), key);
    }

    @Test
    void aCheckReadBeforeASetOfTheSameBatchSeesIt() throws Exception {
        assertThat(checksMissingTheSetOfTheirBatch(true)).as("checks that missed a set read in the same batch after them").isEmpty();
    }

    @Test
    void aCheckReadAfterASetOfTheSameBatchSeesIt() throws Exception {
        assertThat(checksMissingTheSetOfTheirBatch(false)).as("checks that missed a set read in the same batch before them").isEmpty();
    }

    /** Rounds of one batch each: a CHECK and a SET of a new key, in the order given. */
    private List<Integer> checksMissingTheSetOfTheirBatch(boolean checkReadFirst) throws Exception {
        List<Integer> misses = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            String key = "/round/" + checkReadFirst + "/" + i;
            server.onLoop(() -> {
                if (checkReadFirst) {
                    checker.deliver(check(key));
                }
                setter.deliver(set(key));
                if (!checkReadFirst) {
                    checker.deliver(check(key));
                }
            }).await().atMost(AWAIT);
            if (checker.nextAnswerByte(AWAIT) != READY) {
                misses.add(i);
            }
        }
        return misses;
    }

    /** The control: a set read in a later batch than the check is not seen by it. */
    @Test
    void aCheckDoesNotSeeASetReadInALaterBatch() throws Exception {
        server.onLoop(() -> checker.deliver(check("/later"))).await().atMost(AWAIT);
        server.onLoop(() -> setter.deliver(set("/later"))).await().atMost(AWAIT);
        assertThat(checker.nextAnswerByte(AWAIT)).isEqualTo(NOT_READY);
        server.onLoop(() -> checker.deliver(check("/later"))).await().atMost(AWAIT);
        assertThat(checker.nextAnswerByte(AWAIT)).isEqualTo(READY);
    }
}
