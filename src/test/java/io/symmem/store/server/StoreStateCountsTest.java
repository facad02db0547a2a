package io.symmem.store.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The counts StoreState keeps for readers on other threads (metrics) never drift from the maps they
 * mirror, whatever sequence of writes, deletes, waits, releases and cancellations reaches it.
 */
class StoreStateCountsTest {

    private static final List<String> KEYS = List.of("a", "b", "c", "d");
    private static final List<String> OWNERS = List.of("conn1", "conn2", "local");

    record Op(int kind, String key, String other, String owner) {}

    @Property(tries = 500)
    void keyAndWaitCountsFollowTheMaps(@ForAll("ops") List<Op> ops) {
        StoreState state = new StoreState();
        for (Op op : ops) {
            apply(state, op);
            assertThat(state.keyCount()).as("after %s", op).isEqualTo(state.size());
            assertThat(state.pendingWaitCount()).as("after %s", op).isEqualTo(state.pendingWaits());
        }
    }

    private static void apply(StoreState state, Op op) {
        byte[] one = {'1'};
        switch (op.kind()) {
            case 0 -> state.set(op.key(), one);
            case 1 -> state.add(op.key(), 1);
            case 2 -> state.delete(op.key());
            case 3 -> state.append(op.key(), one);
            case 4 -> state.compareSet(op.key(), new byte[0], one);
            case 5 -> state.compareSet(op.key(), one, new byte[] {'2'});
            case 6 -> state.awaitKeys(op.owner(), List.of(op.key(), op.other()), () -> { });
            case 7 -> state.cancelWaits(op.owner());
            case 8 -> state.queuePush(op.key(), one);
            case 9 -> state.queuePop(op.key());
            default -> state.setAll(List.of(op.key(), op.other()), List.of(one, one));
        }
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.integers().between(0, 10), Arbitraries.of(KEYS),
                Arbitraries.of(KEYS), Arbitraries.of(OWNERS)).as(Op::new);
        return op.list().ofMaxSize(60);
    }
}
