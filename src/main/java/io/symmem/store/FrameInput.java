package io.symmem.store;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.Charset;

/**
 * Bytes received but not yet decoded, with a read position. Decoders read forward; when a frame is
 * incomplete they call {@link #rewind(int)} back to its start and wait for more bytes. Integers are
 * little-endian because TCPStore sends its native (x86/ARM little-endian) representation.
 */
final class FrameInput {

    private Buffer bytes = Buffer.buffer();
    private int position;

    void append(Buffer chunk) {
        bytes.appendBuffer(chunk);
    }

    int position() {
        return position;
    }

    void rewind(int mark) {
        position = mark;
    }

    boolean has(long count) {
        return bytes.length() - position >= count;
    }

    boolean isEmpty() {
        return !has(1);
    }

    int readUnsignedByte() {
        int value = bytes.getUnsignedByte(position);
        position += 1;
        return value;
    }

    int readIntLE() {
        int value = bytes.getIntLE(position);
        position += 4;
        return value;
    }

    long readLongLE() {
        long value = bytes.getLongLE(position);
        position += 8;
        return value;
    }

    byte[] readBytes(int count) {
        byte[] value = bytes.getBytes(position, position + count);
        position += count;
        return value;
    }

    String readString(int count, Charset charset) {
        String value = bytes.getString(position, position + count, charset.name());
        position += count;
        return value;
    }

    /** Drops everything before the read position so the buffer does not grow without bound. */
    void discardConsumed() {
        if (position == 0) {
            return;
        }
        bytes = position == bytes.length() ? Buffer.buffer() : bytes.getBuffer(position, bytes.length());
        position = 0;
    }
}
