package io.symmem.store;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A blocking socket that writes TCPStore frames byte by byte as written here from the protocol
 * description (independent of the production encoder), to pin the wire format down.
 */
public final class RawConnection implements AutoCloseable {

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    public RawConnection(int port) throws IOException {
        this(port, 0);
    }

    /**
     * With {@code receiveBufferBytes} > 0, a small kernel receive buffer (set before connecting, so the
     * window is small from the start): a client that does not read then holds up the server after a
     * few KiB instead of the megabytes loopback buffers take.
     */
    public RawConnection(int port, int receiveBufferBytes) throws IOException {
        socket = new Socket();
        if (receiveBufferBytes > 0) {
            socket.setReceiveBufferSize(receiveBufferBytes);
        }
        socket.connect(new java.net.InetSocketAddress(StoreTestSupport.HOST, port), 3000);
        // As every TCPStore client does (PyTorch's included): without it the kernel may hold a small
        // SET back (Nagle) until the server acknowledges the previous one, and the SET reaches the
        // server after a CHECK sent later on another socket.
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(3000);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
    }

    public RawConnection validate() throws IOException {
        return send(frame(0).putInt(0x3C85F7CE));
    }

    public static ByteBuffer frame(int queryType) {
        ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        buffer.put((byte) queryType);
        return buffer;
    }

    public static ByteBuffer string(ByteBuffer buffer, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return buffer.putLong(bytes.length).put(bytes);
    }

    public RawConnection send(ByteBuffer buffer) throws IOException {
        out.write(buffer.array(), 0, buffer.position());
        out.flush();
        return this;
    }

    public RawConnection sendBytes(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    public int readByte() throws IOException {
        return in.readUnsignedByte();
    }

    public long readLong() throws IOException {
        byte[] bytes = new byte[8];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    public int readInt() throws IOException {
        byte[] bytes = new byte[4];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    /** The local port: how the server names this connection ("127.0.0.1:port"). */
    public int localPort() {
        return socket.getLocalPort();
    }

    public byte[] readVector() throws IOException {
        byte[] bytes = new byte[(int) readLong()];
        in.readFully(bytes);
        return bytes;
    }

    /** True if the server closed the connection (EOF or reset) within the socket timeout. */
    public boolean closedByServer() throws IOException {
        try {
            return in.read() == -1;
        } catch (EOFException | java.net.SocketException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    /** Reads whatever is left; true if the server closed the connection (EOF or reset) within the socket timeout. */
    public boolean readsToTheEnd() throws IOException {
        byte[] sink = new byte[64 * 1024];
        try {
            while (in.read(sink) >= 0) {
                // answers the client did not read before: dropped
            }
            return true;
        } catch (java.net.SocketException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        }
    }

    /** True if nothing arrives within {@code millis}. */
    public boolean silentFor(int millis) throws IOException {
        socket.setSoTimeout(millis);
        try {
            return in.read() == -2;
        } catch (SocketTimeoutException e) {
            return true;
        } finally {
            socket.setSoTimeout(3000);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
