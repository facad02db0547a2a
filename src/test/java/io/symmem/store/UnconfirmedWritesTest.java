package io.symmem.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Which reads wait for a round trip on the writing connection, and which writes that round trip confirms. */
class UnconfirmedWritesTest {

    private static final Duration AWAIT = Duration.ofSeconds(5);

    private final AtomicInteger roundTrips = new AtomicInteger();
    private final AtomicInteger reads = new AtomicInteger();
    /** What the next round trip answers; at once by default. */
    private Supplier<Uni<Void>> answer = () -> Uni.createFrom().voidItem();
    private final UnconfirmedWrites writes = new UnconfirmedWrites(() -> {
        roundTrips.incrementAndGet();
        return answer.get();
    });

    private Supplier<Uni<String>> read(String value) {
        return () -> {
            reads.incrementAndGet();
            return Uni.createFrom().item(value);
        };
    }

    /** The next round trips stay in flight until the returned future is completed. */
    private CompletableFuture<Void> roundTripAnsweredLater() {
        CompletableFuture<Void> answered = new CompletableFuture<>();
        answer = () -> Uni.createFrom().completionStage(answered);
        return answered;
    }

    @Test
    void aReadOfAKeyNeverWrittenHereGoesAtOnce() {
        writes.wrote("mine");
        assertThat(writes.confirm(List.of("theirs"), read("v")).await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(0);
    }

    @Test
    void aReadOfAKeyJustWrittenWaitsForOneRoundTripAndTheNextDoesNot() {
        writes.wrote(List.of("a", "b"));
        assertThat(writes.confirm(List.of("x", "b"), read("v")).await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(1);
        // That round trip followed the write of "a" too.
        assertThat(writes.confirm(List.of("a"), read("w")).await().atMost(AWAIT)).isEqualTo("w");
        assertThat(roundTrips).hasValue(1);
        assertThat(writes.outstanding(List.of("a", "b"))).isFalse();
    }

    @Test
    void theReadStartsOnlyOnceTheRoundTripIsAnswered() {
        CompletableFuture<Void> answered = roundTripAnsweredLater();
        writes.wrote("k");
        Uni<String> result = writes.confirm(List.of("k"), read("v"));
        assertThat(reads).hasValue(0);
        answered.complete(null);
        assertThat(result.await().atMost(AWAIT)).isEqualTo("v");
        assertThat(reads).hasValue(1);
    }

    @Test
    void aWriteMadeWhileTheRoundTripIsInFlightStaysOutstanding() {
        CompletableFuture<Void> answered = roundTripAnsweredLater();
        writes.wrote("k");
        Uni<String> first = writes.confirm(List.of("k"), read("v"));
        writes.wrote("k"); // sent after that PING: its answer proves nothing about this write
        answered.complete(null);
        first.await().atMost(AWAIT);
        assertThat(writes.outstanding(List.of("k"))).isTrue();
    }

    @Test
    void aLostRoundTripFailsTheReadAndKeepsTheWriteOutstanding() {
        writes.wrote("k");
        StoreException lost = new StoreException("connection to store 127.0.0.1:1 lost");
        answer = () -> Uni.createFrom().failure(lost);
        Uni<String> result = writes.confirm(List.of("k"), read("v"));
        assertThatThrownBy(() -> result.await().atMost(AWAIT)).isSameAs(lost);
        assertThat(reads).hasValue(0);
        assertThat(writes.outstanding(List.of("k"))).isTrue();
    }

    @Test
    void keysThatTheConnectionRefusesAreNotRecorded() {
        writes.wrote((String) null);
        writes.wrote((List<String>) null);
        assertThat(writes.outstanding(null)).isFalse();
        assertThat(writes.confirm(java.util.Collections.singletonList(null), read("v"))
                .await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(0);
    }

    @Test
    void manyKeysWrittenAndNeverReadAreConfirmedByOneRoundTripOfTheirOwn() {
        for (int i = 0; i < UnconfirmedWrites.TRIM_AT; i++) {
            writes.wrote("k" + i);
        }
        assertThat(roundTrips).hasValue(0);
        writes.wrote("one more");
        assertThat(roundTrips).hasValue(1);
        assertThat(writes.outstanding(List.of("k0", "k1023", "one more"))).isFalse();
        assertThat(reads).hasValue(0);
    }
}
