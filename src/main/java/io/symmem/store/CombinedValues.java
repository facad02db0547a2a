package io.symmem.store;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/** Many values in one: int32 count, then per value int32 length + bytes (little-endian, like the wire). */
final class CombinedValues {
    private CombinedValues() {
    }

    static byte[] encode(List<byte[]> values) {
        long size = 4;
        for (byte[] v : values) {
            size += 4 + v.length;
        }
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("combined values of " + values.size() + " ranks take " + size
                    + " bytes, more than one store value can hold");
        }
        ByteBuffer out = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(values.size());
        for (byte[] v : values) {
            out.putInt(v.length).put(v);
        }
        return out.array();
    }

    static List<byte[]> decode(byte[] combined) {
        ByteBuffer in = ByteBuffer.wrap(combined).order(ByteOrder.LITTLE_ENDIAN);
        int count = in.getInt();
        if (count < 0 || count > in.remaining() / 4) {
            throw new StoreProtocolException("combined value announces " + count + " entries in " + combined.length + " bytes");
        }
        List<byte[]> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int length = in.getInt();
            if (length < 0 || length > in.remaining()) {
                throw new StoreProtocolException("combined value entry " + i + " announces " + length + " bytes, "
                        + in.remaining() + " left");
            }
            byte[] v = new byte[length];
            in.get(v);
            values.add(v);
        }
        return values;
    }
}
