package io.symmem.store.wire;

import io.symmem.store.StoreLimits;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** jqwik generators of valid request streams and of garbage, within given limits. */
public final class StoreRequestArbitraries {

    private StoreRequestArbitraries() {}

    /** Up to 25 valid requests of every type, keys and values within {@code limits}. */
    static Arbitrary<List<StoreRequest>> streams(StoreLimits limits) {
        return request(limits).list().ofMaxSize(25);
    }

    /** Random bytes, or a valid stream with a few bytes flipped, inserted, dropped, or a length overwritten. */
    public static Arbitrary<byte[]> garbage(StoreLimits limits) {
        Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(2000);
        Arbitrary<byte[]> mutated = Combinators.combine(streams(limits), Arbitraries.longs(), Arbitraries.integers().between(1, 8))
                .as((requests, seed, mutations) -> mutate(WireFrames.encode(requests), new Random(seed), mutations));
        return Arbitraries.oneOf(random, mutated);
    }

    private static byte[] mutate(byte[] stream, Random random, int mutations) {
        byte[] bytes = stream;
        for (int m = 0; m < mutations && bytes.length > 0; m++) {
            int at = random.nextInt(bytes.length);
            switch (random.nextInt(4)) {
                case 0 -> bytes[at] = (byte) random.nextInt(256);
                case 1 -> {
                    byte[] longer = new byte[bytes.length + 1];
                    System.arraycopy(bytes, 0, longer, 0, at);
                    longer[at] = (byte) random.nextInt(256);
                    System.arraycopy(bytes, at, longer, at + 1, bytes.length - at);
                    bytes = longer;
                }
                case 2 -> {
                    byte[] shorter = new byte[bytes.length - 1];
                    System.arraycopy(bytes, 0, shorter, 0, at);
                    System.arraycopy(bytes, at + 1, shorter, at, bytes.length - at - 1);
                    bytes = shorter;
                }
                default -> {
                    long length = random.nextBoolean() ? random.nextLong() : random.nextInt(300_000);
                    for (int b = 0; b < 8 && at + b < bytes.length; b++) {
                        bytes[at + b] = (byte) (length >>> (8 * b));
                    }
                }
            }
        }
        return bytes;
    }

    private static Arbitrary<String> key(StoreLimits limits) {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(limits.maxKeyBytes())
                .map(bytes -> new String(bytes, StandardCharsets.ISO_8859_1));
    }

    /** Mostly small values; now and then one over 64 KiB, so that a value grows across many chunks. */
    private static Arbitrary<byte[]> value(StoreLimits limits) {
        Arbitrary<byte[]> small = Arbitraries.bytes().array(byte[].class).ofMaxSize(40);
        Arbitrary<byte[]> big = Combinators.combine(Arbitraries.integers().between(60_000, Math.min(200_000, limits.maxValueBytes())),
                Arbitraries.longs()).as((size, seed) -> {
                    byte[] bytes = new byte[size];
                    new Random(seed).nextBytes(bytes);
                    return bytes;
                });
        return Arbitraries.frequencyOf(Tuple.of(60, small), Tuple.of(1, big));
    }

    private static Arbitrary<List<String>> keys(StoreLimits limits) {
        return key(limits).list().ofMaxSize(limits.maxKeysPerRequest());
    }

    private static Arbitrary<StoreRequest> request(StoreLimits limits) {
        Arbitrary<String> key = key(limits);
        Arbitrary<byte[]> value = value(limits);
        Arbitrary<List<String>> keys = keys(limits);
        return Arbitraries.oneOf(List.of(
                Arbitraries.integers().map(StoreRequest.Validate::new),
                Combinators.combine(key, value).as(StoreRequest.Set::new),
                Combinators.combine(key, value, value).as(StoreRequest.CompareSet::new),
                key.map(StoreRequest.Get::new),
                Combinators.combine(key, Arbitraries.longs()).as(StoreRequest.Add::new),
                keys.map(StoreRequest.Check::new),
                keys.map(StoreRequest.Wait::new),
                Arbitraries.just(new StoreRequest.GetNumKeys()),
                key.map(StoreRequest.DeleteKey::new),
                Combinators.combine(key, value).as(StoreRequest.Append::new),
                keys.map(StoreRequest.MultiGet::new),
                Arbitraries.integers().between(0, limits.maxKeysPerRequest()).flatMap(n ->
                        Combinators.combine(key.list().ofSize(n), value.list().ofSize(n)).as(StoreRequest.MultiSet::new)),
                Arbitraries.just(new StoreRequest.CancelWait()),
                Arbitraries.integers().map(StoreRequest.Ping::new),
                Combinators.combine(key, value).as(StoreRequest.QueuePush::new),
                key.map(StoreRequest.QueuePop::new),
                key.map(StoreRequest.QueueLen::new),
                Arbitraries.just(new StoreRequest.ListKeys())));
    }
}
