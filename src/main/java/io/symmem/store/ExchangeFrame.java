package io.symmem.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What one member leaves in its key of a {@link StoreExchange} round: either its contribution, with the
 * label of the call that made it (so members that paired different calls see it), or a mark that the
 * member has left the group's sequence of rounds (so a peer meeting that round fails at once instead of
 * pairing with a value that belongs to no live call).
 *
 * <p>Layout: one kind byte ({@code 'V'} contribution, {@code 'X'} out of step), a big-endian u16 length,
 * that many bytes of UTF-8 text (the call's label, or why the member is out of step), then the payload
 * (a contribution's value, or a mark's round as a big-endian i64). No frame is ever empty, so an absent key (empty to compare-set) is never a frame.
 */
record ExchangeFrame(boolean outOfStep, String text, byte[] payload) {
    private static final byte CONTRIBUTION = 'V';
    private static final byte OUT_OF_STEP = 'X';
    private static final int MAX_TEXT = 0xFFFF;

    static byte[] contribution(String label, byte[] payload) {
        return encode(CONTRIBUTION, label, payload);
    }

    /** The mark of a member out of step since {@code sinceRound}: the round travels as the payload (8 bytes). */
    static byte[] outOfStep(long sinceRound, String why) {
        return encode(OUT_OF_STEP, why, ByteBuffer.allocate(Long.BYTES).putLong(sinceRound).array());
    }

    /** The round a mark says its member is out of step since (-1 when the mark carries none). */
    long sinceRound() {
        return payload.length == Long.BYTES ? ByteBuffer.wrap(payload).getLong() : -1;
    }

    private static byte[] encode(byte kind, String text, byte[] payload) {
        byte[] textBytes = text.getBytes(StandardCharsets.UTF_8);
        if (textBytes.length > MAX_TEXT) {
            textBytes = Arrays.copyOf(textBytes, MAX_TEXT);
        }
        return ByteBuffer.allocate(3 + textBytes.length + payload.length).put(kind).putShort((short) textBytes.length)
                .put(textBytes).put(payload).array();
    }

    /** The frame in {@code raw}; a value that is no frame (another program wrote the key) is an error naming the key. */
    static ExchangeFrame decode(String key, byte[] raw) {
        if (raw == null || raw.length < 3 || (raw[0] != CONTRIBUTION && raw[0] != OUT_OF_STEP)) {
            throw new StoreProtocolException("store key " + key + " holds " + (raw == null ? "nothing" : raw.length + " bytes")
                    + " that are no exchange frame: another program wrote it, or a symmem older than this one;"
                    + " give each job its own SYMMEM_RUN_ID");
        }
        ByteBuffer in = ByteBuffer.wrap(raw);
        byte kind = in.get();
        int textLength = Short.toUnsignedInt(in.getShort());
        if (textLength > in.remaining()) {
            throw new StoreProtocolException("store key " + key + ": exchange frame says " + textLength
                    + " bytes of label but has " + in.remaining());
        }
        String text = new String(raw, 3, textLength, StandardCharsets.UTF_8);
        byte[] payload = Arrays.copyOfRange(raw, 3 + textLength, raw.length);
        return new ExchangeFrame(kind == OUT_OF_STEP, text, payload);
    }
}
