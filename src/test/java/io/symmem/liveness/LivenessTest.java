package io.symmem.liveness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import io.symmem.store.StoreConnectionLostException;
import io.symmem.store.StoreException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LivenessTest {

    @Test
    void aGuardedWaitFailsAsSoonAsTheWorldFailsNamingTheOperationAndTheRank() {
        Liveness liveness = new Liveness(0);
        CompletableFuture<String> never = new CompletableFuture<>();
        CompletableFuture<String> guarded = liveness.guard(Uni.createFrom().completionStage(never), "barrier of group 'g'")
                .subscribeAsCompletionStage().toCompletableFuture();
        assertThat(guarded).isNotDone();

        liveness.fail(Set.of(2), "rank 2 is gone (test)");

        assertThatThrownBy(() -> guarded.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(PeerLostException.class)
                .hasMessageContaining("barrier of group 'g': aborted: rank 2 is gone (test)");
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void aStoreCallWhoseConnectionDroppedIsToldWhichRankWasLostWhenLivenessSaysSoWithinTheGrace() throws Exception {
        Liveness liveness = new Liveness(1, Duration.ofSeconds(30));
        CompletableFuture<Object> guarded = liveness.guard(
                Uni.createFrom().failure(new StoreConnectionLostException("connection to store 127.0.0.1:1 lost")), "store wait")
                .subscribeAsCompletionStage().toCompletableFuture();
        Thread.sleep(100);
        assertThat(guarded).as("the drop waits for liveness").isNotDone();

        liveness.fail(Set.of(0), "rank 0 is gone: the store it hosts at 127.0.0.1:1 closed the connection", true);

        assertThatThrownBy(() -> guarded.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(PeerLostException.class)
                .hasMessageContaining("store wait: aborted: rank 0 is gone");
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void aDroppedConnectionWithNoWorldFailureIsReportedAsItselfAfterTheGrace() {
        Liveness liveness = new Liveness(1, Duration.ofMillis(200));
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> liveness.guard(
                Uni.createFrom().failure(new StoreConnectionLostException("connection to store 127.0.0.1:1 lost")), "store wait")
                .await().atMost(Duration.ofSeconds(10)))
                .isInstanceOf(StoreConnectionLostException.class).hasMessage("connection to store 127.0.0.1:1 lost");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        // The failure came from the grace's timer thread, which removes the registration just after
        // handing the failure on: the registration is gone, if not already, moments later.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (liveness.listenerCount() != 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void aDropWhileTheRankLeavesIsReportedAtOnce() {
        Liveness liveness = new Liveness(1, Duration.ofHours(1));
        liveness.leaving();
        assertThatThrownBy(() -> liveness.guard(
                Uni.createFrom().failure(new StoreConnectionLostException("connection to store 127.0.0.1:1 lost")), "store wait")
                .await().atMost(Duration.ofSeconds(10))).isInstanceOf(StoreConnectionLostException.class);
    }

    @Test
    void otherStoreFailuresAndDropsAfterTheWorldFailedAreReportedAtOnce() {
        Liveness liveness = new Liveness(1, Duration.ofHours(1));
        assertThatThrownBy(() -> liveness.guard(Uni.createFrom().failure(new StoreException("bad key")), "store wait")
                .await().atMost(Duration.ofSeconds(10))).isInstanceOf(StoreException.class).hasMessage("bad key");
        liveness.fail(Set.of(2), "rank 2 is gone (test)");
        assertThatThrownBy(() -> liveness.guardAgainstLostStore(
                Uni.createFrom().failure(new StoreConnectionLostException("connection to store 127.0.0.1:1 lost")), "store set")
                .await().atMost(Duration.ofSeconds(10)))
                .as("the world failed without the store: the drop is not waited on").isInstanceOf(StoreConnectionLostException.class);
    }

    @Test
    void cancellingAGuardedOperationCancelsTheOperation() {
        Liveness liveness = new Liveness(0);
        AtomicBoolean cancelled = new AtomicBoolean();
        liveness.guard(Uni.createFrom().nothing().onCancellation().invoke(() -> cancelled.set(true)), "store wait")
                .subscribe().with(item -> { }).cancel();
        assertThat(cancelled).isTrue();
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void aWorldFailureCancelsTheOperationItCutShort() {
        Liveness liveness = new Liveness(0);
        AtomicBoolean cancelled = new AtomicBoolean();
        CompletableFuture<Object> guarded = new CompletableFuture<>();
        liveness.guard(Uni.createFrom().nothing().onCancellation().invoke(() -> cancelled.set(true)), "store wait")
                .subscribe().with(guarded::complete, guarded::completeExceptionally);
        liveness.fail(Set.of(1), "rank 1 is gone (test)");
        assertThatThrownBy(() -> guarded.get(5, TimeUnit.SECONDS)).hasCauseInstanceOf(PeerLostException.class);
        assertThat(cancelled).isTrue();
    }

    @Test
    void aGuardThatFinishesNormallyLeavesNoListenerBehind() {
        Liveness liveness = new Liveness(0);
        for (int i = 0; i < 1000; i++) {
            assertThat(liveness.guard(Uni.createFrom().item(i), "op").await().atMost(Duration.ofSeconds(1))).isEqualTo(i);
        }
        assertThat(liveness.listenerCount()).isZero();
    }

    @Test
    void aWaitStartedAfterTheFailureFailsAtOnceAndCheckThrows() {
        Liveness liveness = new Liveness(1);
        liveness.fail(Set.of(0), "rank 0 is gone", true);
        assertThatThrownBy(() -> liveness.guard(Uni.createFrom().nothing(), "store wait").await().atMost(Duration.ofSeconds(5)))
                .isInstanceOf(PeerLostException.class).hasMessage("store wait: aborted: rank 0 is gone");
        assertThatThrownBy(() -> liveness.check("all-reduce")).isInstanceOf(PeerLostException.class)
                .satisfies(e -> assertThat(((PeerLostException) e).ranks()).containsExactly(0));
    }

    @Test
    void anOperationThatDoesNotWaitForPeersIsCutShortOnlyWhenTheStoreIsLost() {
        Liveness peerGone = new Liveness(0);
        peerGone.fail(Set.of(3), "rank 3 is gone");
        assertThat(peerGone.guardAgainstLostStore(Uni.createFrom().item("ok"), "store set").await().atMost(Duration.ofSeconds(1)))
                .isEqualTo("ok");

        Liveness storeGone = new Liveness(1);
        CompletableFuture<String> pending = storeGone.guardAgainstLostStore(Uni.createFrom().<String>nothing(), "store set")
                .subscribeAsCompletionStage().toCompletableFuture();
        storeGone.fail(Set.of(0), "rank 0 is gone", true);
        assertThatThrownBy(pending::join).isInstanceOf(CompletionException.class).hasMessageContaining("store set: aborted");
    }

    @Test
    void theFirstFailureIsKeptLaterRanksAreAddedAndListenersRunOnce() {
        Liveness liveness = new Liveness(0);
        AtomicInteger calls = new AtomicInteger();
        liveness.whenFailed(f -> calls.incrementAndGet());
        liveness.fail(Set.of(2), "rank 2 is gone");
        liveness.fail(Set.of(3), "rank 3 is gone");
        liveness.fail(Set.of(2), "rank 2 is gone again");
        WorldFailure f = liveness.failure().orElseThrow();
        assertThat(f.ranks()).containsExactly(2, 3);
        assertThat(f.reason()).isEqualTo("rank 2 is gone; also: rank 3 is gone");
        assertThat(f.rankList()).isEqualTo("[2, 3]");
        assertThat(calls).hasValue(1);
        AtomicInteger late = new AtomicInteger();
        liveness.whenFailed(x -> late.incrementAndGet());
        assertThat(late).as("a listener added after the failure runs at once").hasValue(1);
    }
}
