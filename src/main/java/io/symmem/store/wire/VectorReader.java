package io.symmem.store.wire;

import io.symmem.store.StoreProtocolException;
import java.util.Arrays;

/**
 * Reads one length-prefixed byte string (a key or a value: uint64 length, then the bytes) that may
 * arrive in any number of pieces, keeping what has arrived between calls so that no byte is read
 * twice. The length is checked against its limit the moment it is read.
 *
 * <p>The array grows with what arrives (doubling, exact size last) instead of being allocated at the
 * announced length: a peer that announces a 64 MiB value and sends 8 bytes costs 64 KiB, not 64 MiB.
 */
final class VectorReader {

    private static final int FIRST_CAPACITY = 64 * 1024;

    private byte[] bytes;
    private int length = -1;
    private int filled;

    /**
     * The complete payload, or null while more bytes are needed (what arrived is kept).
     *
     * @param what "key" or "value", for the error message
     * @throws StoreProtocolException if the announced length is over {@code limit}
     */
    byte[] read(FrameInput in, int limit, String what) {
        if (length < 0) {
            if (!in.has(8)) {
                return null;
            }
            long announced = in.readLongLE();
            if (announced < 0 || announced > limit) {
                throw new StoreProtocolException(what + " of " + Long.toUnsignedString(announced)
                        + " bytes exceeds the limit of " + limit);
            }
            length = (int) announced;
            filled = 0;
            bytes = new byte[Math.min(length, FIRST_CAPACITY)];
        }
        while (filled < length && in.available() > 0) {
            if (filled == bytes.length) {
                bytes = Arrays.copyOf(bytes, (int) Math.min(length, 2L * bytes.length));
            }
            filled += in.readInto(bytes, filled, bytes.length - filled);
        }
        if (filled < length) {
            return null;
        }
        byte[] done = bytes;
        bytes = null;
        length = -1;
        return done;
    }
}
