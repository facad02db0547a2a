package io.symmem.cli.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection to a sidecar on 127.0.0.1, one request at a time, blocking: the
 * least a client can add to a call, so that a benchmark measures the server. Understands only what a
 * symmem sidecar answers (a Content-Length body); not a general client.
 */
final class LoopbackHttp implements AutoCloseable {
    record Reply(int status, String body) {
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final int port;

    LoopbackHttp(int port) throws IOException {
        this.port = port;
        this.socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setTcpNoDelay(true);
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    Reply post(String target, String jsonBody) throws IOException {
        byte[] body = jsonBody == null ? new byte[0] : jsonBody.getBytes(StandardCharsets.UTF_8);
        String head = "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nContent-Length: " + body.length
                + (jsonBody == null ? "" : "\r\nContent-Type: application/json") + "\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        String status = line();
        int contentLength = -1;
        for (String header = line(); !header.isEmpty(); header = line()) {
            if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                contentLength = Integer.parseInt(header.substring(15).trim());
            }
        }
        if (contentLength < 0) {
            throw new IOException("answer to POST " + target + " without Content-Length: " + status);
        }
        byte[] answer = in.readNBytes(contentLength);
        return new Reply(Integer.parseInt(status.split(" ")[1]), new String(answer, StandardCharsets.UTF_8));
    }

    private String line() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64);
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the sidecar closed the connection");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
