package io.symmem.store.wire;

import io.vertx.core.buffer.Buffer;

/**
 * Bytes received but not yet decoded, with a read position. Integers are little-endian because
 * TCPStore sends its native (x86/ARM little-endian) representation.
 *
 * <p>The server's {@link RequestDecoder} reads forward and never goes back: a field that has not fully
 * arrived is either left unread (fixed-size fields: check {@link #has} first) or taken as far as it
 * goes ({@link #readInto}), so every byte is looked at once however the stream is cut. The clients'
 * {@link ResponseDecoder} still rewinds to the start of an incomplete answer ({@link #rewind}) and
 * decodes it again when more bytes arrive.
 */
public final class FrameInput {

    private Buffer bytes = Buffer.buffer();
    private int position;
    private long consumed;

    public void append(Buffer chunk) {
        if (position == bytes.length()) {
            // Everything before was read: take the chunk as it is instead of copying it.
            bytes = chunk;
        position = 0;
        } else {
            bytes.appendBuffer(chunk);
        }
    }

    public int position() {
        return position;
    }

    /** Goes back to {@code mark} (a {@link #position()} read earlier) to decode an incomplete answer again later. */
    public void rewind(int mark) {
        consumed -= position - mark;
        position = mark;
    }

    public boolean isEmpty() {
        return !has(1);
    }

    public boolean has(long count) {
        return available() >= count;
    }

    int available() {
        return bytes.length() - position;
    }

    /** Bytes read since this input was made: frame sizes are differences of it. */
    long consumed() {
        return consumed;
    }

    public int readUnsignedByte() {
        int value = bytes.getUnsignedByte(position);
        advance(1);
        return value;
    }

    int readIntLE() {
        int value = bytes.getIntLE(position);
        advance(4);
        return value;
    }

    long readLongLE() {
        long value = bytes.getLongLE(position);
        advance(8);
        return value;
    }

    byte[] readBytes(int count) {
        byte[] value = bytes.getBytes(position, position + count);
        advance(count);
        return value;
    }

    String readString(int count, java.nio.charset.Charset charset) {
        String value = bytes.getString(position, position + count, charset.name());
        advance(count);
        return value;
    }

    /** Copies up to {@code count} bytes (as many as have arrived) into {@code target}; returns how many. */
    int readInto(byte[] target, int offset, int count) {
        int n = Math.min(count, available());
        bytes.getBytes(position, position + n, target, offset);
        advance(n);
        return n;
    }

    /** Drops everything before the read position so the buffer does not grow without bound. */
    public void discardConsumed() {
        if (position == 0) {
            return;
        }
        // On the server what is left is less than a fixed-size field (payloads are taken as they
        // arrive): a small copy.
        bytes = position == bytes.length() ? Buffer.buffer() : bytes.getBuffer(position, bytes.length());
        position = 0;
    }

    private void advance(int n) {
        position += n;
        consumed += n;
    }
}
