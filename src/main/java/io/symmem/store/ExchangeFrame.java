package io.symmem.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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

    /** The call a member made in a round, that its peers' frames are checked against. */
    record Expected(String groupName, int rank, String op, String label, long instance, long round) {
        String where() {
            return op + " of group '" + groupName + "' (instance " + instance + ", round " + round + ")";
        }
    }

    /**
     * The payloads of a round's frames (index = the keys'), or the failure that a mark or a foreign label
     * means. A foreign label puts the group out of step unless every member reads every frame of the round
     * (a gather): then every member fails the round alike and the group stays in step.
     */
    static List<byte[]> payloads(Expected mine, List<String> keys, List<byte[]> frames, boolean everyMemberSeesEveryFrame) {
        List<byte[]> payloads = new ArrayList<>(frames.size());
        for (int i = 0; i < frames.size(); i++) {
            String key = keys.get(i);
            ExchangeFrame f = decode(key, frames.get(i));
            int peer = StoreExchange.rankOfKey(key);
            if (f.outOfStep()) {
                long since = f.sinceRound() >= 0 ? f.sinceRound() : mine.round();
                throw new ExchangeOutOfStepException(mine.where() + " failed: the group is out of step since round " + since
                        + " (" + f.text() + "); every later call of this group fails the same way on every member: make a new"
                        + " group and go on there", mine.groupName(), since, f.text());
            }
            if (!f.text().equals(mine.label())) {
                String calls = "group rank " + mine.rank() + " called '" + mine.label() + "' and group rank " + peer + " called '"
                        + f.text() + "' in the same round";
                if (everyMemberSeesEveryFrame) {
                    throw new ExchangeMismatchException(mine.where() + " failed: " + calls + "; every member saw both calls and"
                            + " failed this round alike, so the group stays in step: make the same call on every member next time",
                            mine.groupName(), mine.round());
                }
                throw new ExchangeOutOfStepException(mine.where() + " failed: " + calls + "; the members' calls no longer pair,"
                        + " so every later call of this group fails on every member: make a new group and go on there",
                        mine.groupName(), mine.round(), "in round " + mine.round() + " " + calls);
            }
            payloads.add(f.payload());
        }
        return payloads;
    }
}
