package io.symmem.cli.bench;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A plain blocking socket that speaks TCPStore frames the way a careless or hostile client would:
 * one huge frame in many small writes, or many requests whose answers it never reads. The frames are
 * written here byte by byte (not with the store's own encoder) because the point is to control
 * exactly what goes on the wire and when.
 */
final class HostileStoreSocket implements AutoCloseable {

    private static final int VALIDATE = 0, SET = 1, GET = 3, MULTI_SET = 11, PING = 13;
    private static final int MAGIC = 0x3C85F7CE;

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    HostileStoreSocket(String host, int port) throws IOException {
        socket = new Socket(host, port);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
        write(frame(VALIDATE, 4).putInt(MAGIC));
    }

    /** SET of {@code key} (a wire key, "/" included) to {@code value}. */
    void set(String key, byte[] value) throws IOException {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        write(frame(SET, 16 + k.length + value.length).putLong(k.length).put(k).putLong(value.length).put(value));
    }

    /** {@code count} GETs of {@code key} in one write; their answers are left unread. */
    void getRepeatedly(String key, int count) throws IOException {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        ByteBuffer all = ByteBuffer.allocate(count * (9 + k.length)).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            all.put((byte) GET).putLong(k.length).put(k);
        }
        write(all);
    }

    /**
     * One MULTI_SET of {@code keys} keys ({@code prefix + i}) with {@code valueBytes}-byte values,
     * sent in writes of {@code writeBytes} each. The frame is produced as it is written, one write's
     * worth at a time, so that the benchmark's own allocations do not add to the server's garbage
     * collections (they share the JVM). Returns the frame's size.
     */
    long multiSetInWrites(String prefix, int keys, int valueBytes, int writeBytes) throws IOException {
        ChunkedWriter frame = new ChunkedWriter(out, writeBytes);
        frame.put(ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).put((byte) MULTI_SET).putLong(keys).array());
        byte[] value = new byte[valueBytes];
        ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < keys; i++) {
            byte[] k = (prefix + i).getBytes(StandardCharsets.UTF_8);
            value[0] = (byte) i;
            frame.put(length.clear().putLong(k.length).array());
            frame.put(k);
            frame.put(length.clear().putLong(valueBytes).array());
            frame.put(value);
        }
        frame.finish();
        return frame.total;
    }

    /** Cuts what is put into writes of exactly {@code size} bytes (the last one shorter). */
    private static final class ChunkedWriter {
        private final OutputStream out;
        private final byte[] chunk;
        private int filled;
        long total;

        ChunkedWriter(OutputStream out, int size) {
            this.out = out;
            this.chunk = new byte[size];
        }

        void put(byte[] bytes) throws IOException {
            int at = 0;
            while (at < bytes.length) {
                int n = Math.min(bytes.length - at, chunk.length - filled);
                System.arraycopy(bytes, at, chunk, filled, n);
                filled += n;
                at += n;
                total += n;
                if (filled == chunk.length) {
                    out.write(chunk, 0, filled);
                    filled = 0;
                }
            }
        }

        void finish() throws IOException {
            if (filled > 0) {
                out.write(chunk, 0, filled);
                filled = 0;
            }
            out.flush();
        }
    }

    /** PING and wait for its echo: proves the server applied everything this socket sent before. */
    void ping(int nonce) throws IOException {
        write(frame(PING, 4).putInt(nonce));
        byte[] echo = new byte[4];
        in.readFully(echo);
        int got = ByteBuffer.wrap(echo).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (got != nonce) {
            throw new IOException("PING echoed " + got + " instead of " + nonce);
        }
    }

    /** Sets how long {@link #ping} may block reading. */
    void readTimeoutMillis(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    private static ByteBuffer frame(int type, int bodyBytes) {
        return ByteBuffer.allocate(1 + bodyBytes).order(ByteOrder.LITTLE_ENDIAN).put((byte) type);
    }

    private void write(ByteBuffer frame) throws IOException {
        out.write(frame.array(), 0, frame.position());
        out.flush();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
