package io.symmem.service.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HttpWaitLimitTest {

    @Test
    void aStoppingRankAnswersItsOpenWaits503AndRefusesNewOnes() {
        HttpWaitLimit limit = new HttpWaitLimit();
        UniAssertSubscriber<Object> open = limit.run(3, () -> Uni.createFrom().nothing()).subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        open.assertNotTerminated();

        assertThat(limit.endAll()).isEqualTo(1);

        Throwable answer = open.assertFailedWith(StoreHttpException.class).getFailure();
        assertThat(((StoreHttpException) answer).status()).isEqualTo(503);
        assertThat(answer).hasMessageContaining("rank 3 is stopping");
        assertThatThrownBy(() -> limit.run(3, () -> Uni.createFrom().item("late")))
                .isInstanceOfSatisfying(StoreHttpException.class, e -> assertThat(e.status()).isEqualTo(503))
                .hasMessageContaining("rank 3 is stopping");
        assertThat(limit.endAll()).as("ended once").isZero();
    }

    @Test
    void aWaitThatEndsFirstKeepsItsValueAndFreesItsPlace() {
        HttpWaitLimit limit = new HttpWaitLimit();
        List<UniAssertSubscriber<Object>> held = new ArrayList<>();
        for (int i = 0; i < HttpWaitLimit.MAX_WAITS; i++) {
            held.add(limit.run(0, () -> Uni.createFrom().nothing()).subscribe().withSubscriber(UniAssertSubscriber.create()));
        }
        assertThatThrownBy(() -> limit.run(0, () -> Uni.createFrom().item("over")))
                .isInstanceOfSatisfying(StoreHttpException.class, e -> assertThat(e.status()).isEqualTo(503))
                .hasMessageContaining("already serves " + HttpWaitLimit.MAX_WAITS);
        held.get(0).cancel();
        limit.run(0, () -> Uni.createFrom().item("value")).subscribe().withSubscriber(UniAssertSubscriber.create())
                .assertItem("value");
        assertThat(limit.endAll()).isEqualTo(HttpWaitLimit.MAX_WAITS - 1);
    }

    @Test
    void aWaitsOwnFailureReachesTheCallerAsItIs() {
        HttpWaitLimit limit = new HttpWaitLimit();
        IllegalStateException own = new IllegalStateException("the store's own answer");
        limit.run(0, () -> Uni.createFrom().failure(own)).subscribe().withSubscriber(UniAssertSubscriber.create())
                .assertFailedWith(IllegalStateException.class, "the store's own answer");
        assertThat(limit.endAll()).as("nothing left open").isZero();
    }

    @Test
    void aCallerThatLeavesCancelsTheWaitItself() {
        HttpWaitLimit limit = new HttpWaitLimit();
        java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
        UniAssertSubscriber<Object> caller = limit.run(0, () -> Uni.createFrom().nothing()
                .onCancellation().invoke(() -> cancelled.set(true))).subscribe().withSubscriber(UniAssertSubscriber.create());
        caller.cancel();
        assertThat(cancelled).as("the store wait withdrawn").isTrue();
        assertThat(limit.endAll()).as("its place freed").isZero();
    }
}
