package io.symmem.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket: for requests Java's HttpClient will not send (a bad %-escape, an
 * unknown HTTP version, a Content-Length without its body) and for a client that goes away mid-request.
 */
final class RawHttp {

    /** How long a read may block before the test fails rather than hang; a working server answers long before. */
    private static final Duration HANG = Duration.ofSeconds(30);

    private RawHttp() {}

    /** A parsed response: status, headers (names lower-cased), body as text. */
    record Reply(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    /** Sends {@code method target} with {@code headers} and {@code body} (may be null); reads the answer. */
    static Reply exchange(int port, String method, String target, Map<String, String> headers, String body) throws IOException {
        return exchange(port, request(method, target, "HTTP/1.1", headers, body));
    }

    static String request(String method, String target, String version, Map<String, String> headers, String body) {
        StringBuilder text = new StringBuilder(method).append(' ').append(target).append(' ').append(version).append("\r\n")
                .append("Host: 127.0.0.1\r\nConnection: close\r\n");
        headers.forEach((name, value) -> text.append(name).append(": ").append(value).append("\r\n"));
        if (body != null) {
            text.append("Content-Length: ").append(body.getBytes(StandardCharsets.UTF_8).length).append("\r\n");
        }
        return text.append("\r\n").append(body == null ? "" : body).toString();
    }

    /** Writes {@code request} as is and reads the answer until the server closes the connection. */
    static Reply exchange(int port, String request) throws IOException {
        return exchange(port, request, HANG);
    }

    /**
     * As {@link #exchange(int, String)}, giving up after {@code patience} without an answer: then the
     * connection is closed, as a client that stops waiting does, and the result is empty.
     */
    static java.util.Optional<Reply> exchangeOrGiveUp(int port, String request, Duration patience) throws IOException {
        try {
            return java.util.Optional.of(exchange(port, request, patience));
        } catch (SocketTimeoutException gaveUp) {
            return java.util.Optional.empty();
        }
    }

    private static Reply exchange(int port, String request, Duration patience) throws IOException {
        try (Socket socket = send(port, request)) {
            socket.setSoTimeout((int) patience.toMillis());
            return read(socket);
        }
    }

    /** A connection that has sent {@code request}: {@link #read} its answer, or close it to go away. */
    static Socket send(int port, String request) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout((int) HANG.toMillis());
        socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Reads the answer on {@code socket} until the server closes it (requests say Connection: close). */
    static Reply read(Socket socket) throws IOException {
        return parse(readAll(socket.getInputStream()));
    }

    private static byte[] readAll(InputStream in) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        in.transferTo(all);
        return all.toByteArray();
    }

    private static Reply parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.UTF_8);
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) {
            throw new AssertionError("not an HTTP response: '" + text + "'");
        }
        String[] lines = text.substring(0, end).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
        }
        String body = text.substring(end + 4);
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            body = unchunk(body);
        }
        return new Reply(status, headers, body);
    }

    private static String unchunk(String chunked) {
        StringBuilder body = new StringBuilder();
        int at = 0;
        while (true) {
            int lineEnd = chunked.indexOf("\r\n", at);
            int size = Integer.parseInt(chunked.substring(at, lineEnd).trim(), 16);
            if (size == 0) {
                return body.toString();
            }
            body.append(chunked, lineEnd + 2, lineEnd + 2 + size);
            at = lineEnd + 2 + size + 2;
        }
    }
}
