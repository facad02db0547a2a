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

    private final UnconfirmedWrites writes = new UnconfirmedWrites();
    private final AtomicInteger roundTrips = new AtomicInteger();
    private final AtomicInteger reads = new AtomicInteger();

    private final Supplier<Uni<Void>> instantRoundTrip = () -> {
        roundTrips.incrementAndGet();
        return Uni.createFrom().voidItem();
    };

    private Supplier<Uni<String>> read(String value) {
        return () -> {
            reads.incrementAndGet();
            return Uni.createFrom().item(value);
        };
    }

    @Test
    void aReadOfAKeyNeverWrittenHereGoesAtOnce() {
        writes.wrote("mine");
        assertThat(writes.confirm(List.of("theirs"), instantRoundTrip, read("v")).await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(0);
    }

    @Test
    void aReadOfAKeyJustWrittenWaitsForOneRoundTripAndTheNextDoesNot() {
        writes.wrote(List.of("a", "b"));
        assertThat(writes.confirm(List.of("x", "b"), instantRoundTrip, read("v")).await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(1);
        // That round trip followed the write of "a" too.
        assertThat(writes.confirm(List.of("a"), instantRoundTrip, read("w")).await().atMost(AWAIT)).isEqualTo("w");
        assertThat(roundTrips).hasValue(1);
        assertThat(writes.outstanding(List.of("a", "b"))).isFalse();
    }

    @Test
    void theReadStartsOnlyOnceTheRoundTripIsAnswered() {
        CompletableFuture<Void> answer = new CompletableFuture<>();
        writes.wrote("k");
        Uni<String> result = writes.confirm(List.of("k"), () -> Uni.createFrom().completionStage(answer), read("v"));
        assertThat(reads).hasValue(0);
        answer.complete(null);
        assertThat(result.await().atMost(AWAIT)).isEqualTo("v");
        assertThat(reads).hasValue(1);
    }

    @Test
    void aWriteMadeWhileTheRoundTripIsInFlightStaysOutstanding() {
        CompletableFuture<Void> answer = new CompletableFuture<>();
        writes.wrote("k");
        Uni<String> first = writes.confirm(List.of("k"), () -> Uni.createFrom().completionStage(answer), read("v"));
        writes.wrote("k"); // sent after that PING: its answer proves nothing about this write
        answer.complete(null);
        first.await().atMost(AWAIT);
        assertThat(writes.outstanding(List.of("k"))).isTrue();
    }

    @Test
    void aLostRoundTripFailsTheReadAndKeepsTheWriteOutstanding() {
        writes.wrote("k");
        StoreException lost = new StoreException("connection to store 127.0.0.1:1 lost");
        Uni<String> result = writes.confirm(List.of("k"), () -> Uni.createFrom().failure(lost), read("v"));
        assertThatThrownBy(() -> result.await().atMost(AWAIT)).isSameAs(lost);
        assertThat(reads).hasValue(0);
        assertThat(writes.outstanding(List.of("k"))).isTrue();
    }

    @Test
    void keysThatTheConnectionRefusesAreNotRecorded() {
        writes.wrote((String) null);
        writes.wrote((List<String>) null);
        assertThat(writes.outstanding(null)).isFalse();
        assertThat(writes.confirm(java.util.Collections.singletonList(null), instantRoundTrip, read("v"))
                .await().atMost(AWAIT)).isEqualTo("v");
        assertThat(roundTrips).hasValue(0);
    }
}
