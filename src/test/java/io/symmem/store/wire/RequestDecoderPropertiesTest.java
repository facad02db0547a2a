package io.symmem.store.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;

/**
 * The decoder reads a stream of requests the same however TCP cuts it into chunks, reads every byte
 * once, and turns anything it cannot decode into a {@link StoreProtocolException} (which closes that
 * connection) and nothing else.
 */
class RequestDecoderPropertiesTest {

    private static final StoreLimits LIMITS = new StoreLimits(64, 256 * 1024, 32);

    /** What a decode produced: the requests as text, the bytes consumed, the sum of the frame sizes. */
    record Decoded(List<String> requests, long consumed, long frameBytes) {}

    @Property(tries = 300)
    void anyValidStreamSplitAnywhereDecodesAsWhole(@ForAll("streams") List<StoreRequest> requests,
            @ForAll @Size(max = 64) List<@DoubleRange(min = 0, max = 1, maxIncluded = false) Double> cuts) {
        byte[] stream = WireFrames.encode(requests);
        Decoded whole = decode(stream, new int[0]);
        Decoded split = decode(stream, positions(cuts, stream.length));

        assertThat(whole.requests()).containsExactlyElementsOf(requests.stream().map(WireFrames::describe).toList());
        assertThat(split.requests()).containsExactlyElementsOf(whole.requests());
        // Linear: every byte read exactly once, however the stream was cut.
        assertThat(split.consumed()).isEqualTo(stream.length);
        assertThat(split.frameBytes()).isEqualTo(stream.length);
    }

    @Property(tries = 60)
    void oneByteAtATimeDecodesAsWhole(@ForAll("streams") List<StoreRequest> requests) {
        byte[] stream = WireFrames.encode(requests);
        if (stream.length > 300_000) {
            return; // a few big values: covered by the property above, too slow byte by byte
        }
        int[] everyByte = new int[Math.max(0, stream.length - 1)];
        Arrays.setAll(everyByte, i -> i + 1);
        assertThat(decode(stream, everyByte).requests())
                .containsExactlyElementsOf(requests.stream().map(WireFrames::describe).toList());
    }

    @Property(tries = 1000)
    void garbageEndsInAProtocolErrorOrMoreInputNeverAnythingElse(@ForAll("garbage") byte[] stream,
            @ForAll @Size(max = 16) List<@DoubleRange(min = 0, max = 1, maxIncluded = false) Double> cuts) {
        try {
            decode(stream, positions(cuts, stream.length));
        } catch (StoreProtocolException expected) {
            // what closes the connection: fine
        }
        // Any other exception (index out of bounds, negative array size, out of memory) fails the property.
    }

    @Example
    void aFrameAnnouncingAHugeValueCostsWhatArrivedNotWhatWasAnnounced() {
        StoreLimits big = new StoreLimits(64, Integer.MAX_VALUE - 16, 32);
        byte[] announce = java.nio.ByteBuffer.allocate(1 + 8 + 2 + 8 + 10).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .put((byte) QueryType.SET.code()).putLong(2).put((byte) '/').put((byte) 'k')
                .putLong(Integer.MAX_VALUE - 16).put(new byte[10]).array();
        FrameInput in = new FrameInput();
        in.append(Buffer.buffer(announce));
        RequestDecoder decoder = new RequestDecoder(big);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();

        assertThat(decoder.next(in)).isNull();

        // 2 GiB announced, 10 bytes sent: the decoder holds a first slice of 64 KiB, not the announced size.
        assertThat(threads.getCurrentThreadAllocatedBytes() - before).isLessThan(1 << 20);
    }

    // ---- decoding as the connection does: append a chunk, take every complete request, discard ----

    static Decoded decode(byte[] stream, int[] cutPositions) {
        FrameInput in = new FrameInput();
        RequestDecoder decoder = new RequestDecoder(LIMITS);
        List<String> requests = new ArrayList<>();
        long frameBytes = 0;
        int from = 0;
        for (int i = 0; i <= cutPositions.length; i++) {
            int to = i < cutPositions.length ? cutPositions[i] : stream.length;
            in.append(Buffer.buffer(Arrays.copyOfRange(stream, from, to)));
            StoreRequest request;
            while ((request = decoder.next(in)) != null) {
                requests.add(WireFrames.describe(request));
                frameBytes += decoder.lastFrameBytes();
            }
            in.discardConsumed();
            from = to;
        }
        return new Decoded(requests, in.consumed(), frameBytes);
    }

    private static int[] positions(List<Double> cuts, int length) {
        TreeSet<Integer> at = new TreeSet<>();
        for (double cut : cuts) {
            int position = (int) (cut * length);
            if (position > 0 && position < length) {
                at.add(position);
            }
        }
        return at.stream().mapToInt(Integer::intValue).toArray();
    }

    // ---- generators ----

    @Provide
    Arbitrary<List<StoreRequest>> streams() {
        return StoreRequestArbitraries.streams(LIMITS);
    }

    @Provide
    Arbitrary<byte[]> garbage() {
        return StoreRequestArbitraries.garbage(LIMITS);
    }
}
