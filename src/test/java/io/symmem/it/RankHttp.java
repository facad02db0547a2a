package io.symmem.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** GETs against a rank's HTTP port on loopback, and polling until it answers as expected. */
final class RankHttp {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** PUT of raw bytes (application/octet-stream). */
    HttpResponse<String> put(int port, String path, byte[] body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/octet-stream").timeout(Duration.ofSeconds(5))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Polls until the rank answers {@code status} with a body containing {@code text}; fails past the deadline. */
    HttpResponse<String> await(int port, String path, int status, String text, long seconds) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        HttpResponse<String> last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = get(port, path);
                if (last.statusCode() == status && last.body().contains(text)) {
                    return last;
                }
            } catch (java.io.IOException notYetListening) {
                // the rank is still starting
            }
            Thread.sleep(100);
        }
        throw new AssertionError("GET " + path + " on port " + port + " never answered " + status + " with '" + text
                + "'; last: " + (last == null ? "no answer" : last.statusCode() + " " + last.body()));
    }
}
