package io.symmem.cli;

import io.smallrye.mutiny.Uni;
import io.symmem.store.StoreException;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.client.TcpStoreClient;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Runs every operation of the {@code Store} interface against a store server through our client,
 * with exact expected results (c10d TCPStore semantics), one line per check. A check whose request
 * makes the server drop the connection is reported as UNSUPPORTED (an older server that does not
 * know the query), and the next check gets a fresh connection.
 */
final class StoreCheck {
    private static final Duration SHORT = Duration.ofMillis(300);
    private static final Duration CALL = Duration.ofSeconds(10);

    /** A check body; throws {@link Mismatch} when a result differs from the expected one. */
    @FunctionalInterface
    interface Body {
        void run(TcpStoreClient a, TcpStoreClient b) throws Exception;
    }

    static final class Mismatch extends Exception {
        Mismatch(String message) {
            super(message);
        }
    }

    /** {@code group}: checks of one kind of query (e.g. queues); once one is unsupported, so are the rest. */
    private record Check(String name, String group, Body body) {
    }

    private final Vertx vertx;
    private final String host;
    private final int port;
    private final PrintStream out;
    private final String p = "symmem-check/" + Long.toHexString(System.nanoTime()) + "/";
    private final List<Check> checks = new ArrayList<>();
    private TcpStoreClient a;
    private TcpStoreClient b;
    int passed;
    int failed;
    int unsupported;

    /** Checks the server could not run (it closed the connection on that kind of query). */
    int unsupported() {
        return unsupported;
    }

    StoreCheck(Vertx vertx, String host, int port, PrintStream out) {
        this.vertx = vertx;
        this.host = host;
        this.port = port;
        this.out = out;
        define();
    }

    private void define() {
        add("ping", (a, b) -> call(a.ping()));
        add("set+get (all 256 byte values)", (a, b) -> {
            byte[] v = new byte[256];
            for (int i = 0; i < v.length; i++) {
                v[i] = (byte) i;
            }
            call(a.set(p + "bytes", v));
            expectBytes(v, call(b.get(p + "bytes", CALL)));
        });
        add("set overwrites", (a, b) -> {
            call(a.set(p + "over", utf("one")));
            call(a.set(p + "over", utf("two")));
            expectText("two", call(a.get(p + "over", CALL)));
        });
        add("set+get empty value", (a, b) -> {
            call(a.set(p + "empty", new byte[0]));
            expectBytes(new byte[0], call(a.get(p + "empty", CALL)));
        });
        add("get missing key times out", (a, b) -> expectTimeout(() -> a.get(p + "never", SHORT), p + "never"));
        add("get waits for a later set (other client)", (a, b) -> {
            CompletableFuture<byte[]> got = b.get(p + "late", CALL).subscribeAsCompletionStage();
            Thread.sleep(100);
            expect(!got.isDone(), "get returned before the key was set");
            call(a.set(p + "late", utf("now")));
            expectText("now", got.get(CALL.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
        });
        add("add absent key, add negative, get as text", (a, b) -> {
            expectEq(5L, call(a.add(p + "ctr", 5)));
            expectEq(3L, call(b.add(p + "ctr", -2)));
            expectText("3", call(a.get(p + "ctr", CALL)));
        });
        add("check", (a, b) -> {
            call(a.set(p + "c1", utf("x")));
            expectEq(true, call(a.check(List.of(p + "c1"))));
            expectEq(false, call(a.check(List.of(p + "c1", p + "nope"))));
            expectEq(false, call(a.check(List.of(p + "nope"))));
        });
        add("await existing keys", (a, b) -> {
            call(a.set(p + "w1", utf("1")));
            call(a.set(p + "w2", utf("2")));
            call(a.await(List.of(p + "w1", p + "w2"), CALL));
        });
        add("await times out naming the missing key", (a, b) ->
                expectTimeout(() -> a.await(List.of(p + "w1", p + "wmissing"), SHORT), p + "wmissing"));
        add("await released by another client's set", (a, b) -> {
            CompletableFuture<Void> w = b.await(List.of(p + "w3", p + "w4"), CALL).subscribeAsCompletionStage();
            call(a.set(p + "w3", utf("3")));
            Thread.sleep(50);
            expect(!w.isDone(), "await finished with one of two keys set");
            call(a.add(p + "w4", 1));
            w.get(CALL.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        });
        add("delete", (a, b) -> {
            call(a.set(p + "del", utf("x")));
            expectEq(true, call(a.delete(p + "del")));
            expectEq(false, call(a.check(List.of(p + "del"))));
            expectEq(false, call(a.delete(p + "del")));
        });
        add("compareSet missing key, empty expected: sets", (a, b) -> {
            expectText("new", call(a.compareSet(p + "cs1", new byte[0], utf("new"))));
            expectText("new", call(a.get(p + "cs1", CALL)));
        });
        add("compareSet missing key, non-empty expected: returns expected, stores nothing", (a, b) -> {
            expectText("exp", call(a.compareSet(p + "cs2", utf("exp"), utf("new"))));
            expectEq(false, call(a.check(List.of(p + "cs2"))));
        });
        add("compareSet match: swaps", (a, b) -> {
            call(a.set(p + "cs3", utf("old")));
            expectText("new", call(a.compareSet(p + "cs3", utf("old"), utf("new"))));
            expectText("new", call(b.get(p + "cs3", CALL)));
        });
        add("compareSet mismatch: returns current, unchanged", (a, b) -> {
            call(a.set(p + "cs4", utf("cur")));
            expectText("cur", call(a.compareSet(p + "cs4", utf("other"), utf("new"))));
            expectText("cur", call(a.get(p + "cs4", CALL)));
        });
        add("append creates then appends", (a, b) -> {
            call(a.append(p + "app", utf("ab")));
            // An append has no answer: a's ping proves the server read it before b's is sent (the
            // kernel does not order two sockets' data).
            call(a.ping());
            call(b.append(p + "app", utf("cd")));
            call(b.ping()); // b's append is applied before its ping's answer
            expectText("abcd", call(a.get(p + "app", CALL)));
        });
        add("append releases a waiting get", (a, b) -> {
            CompletableFuture<byte[]> got = b.get(p + "app2", CALL).subscribeAsCompletionStage();
            Thread.sleep(50);
            call(a.append(p + "app2", utf("z")));
            expectText("z", got.get(CALL.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
        });
        add("multiSet + multiGet in order", (a, b) -> {
            call(a.multiSet(List.of(p + "m1", p + "m2", p + "m3"), List.of(utf("v1"), new byte[0], utf("v3"))));
            List<byte[]> got = call(b.multiGet(List.of(p + "m3", p + "m1", p + "m2"), CALL));
            expectEq(3, got.size());
            expectText("v3", got.get(0));
            expectText("v1", got.get(1));
            expectText("", got.get(2));
        });
        add("multiGet with a missing key times out", (a, b) ->
                expectTimeout(() -> a.multiGet(List.of(p + "m1", p + "mmissing"), SHORT), p + "mmissing"));
        add("numKeys counts sets and deletes", (a, b) -> {
            long before = call(a.numKeys());
            call(a.set(p + "n1", utf("1")));
            call(a.set(p + "n2", utf("2")));
            expectEq(before + 2, call(a.numKeys()));
            call(a.delete(p + "n1"));
            expectEq(before + 1, call(b.numKeys()));
        });
        add("listKeys", (a, b) -> {
            call(a.set(p + "l/x", utf("1")));
            call(a.set(p + "l/y", utf("2")));
            Set<String> mine = new HashSet<>();
            for (String k : call(a.listKeys())) {
                if (k.startsWith(p + "l/")) {
                    mine.add(k);
                }
            }
            expectEq(Set.of(p + "l/x", p + "l/y"), mine);
        });
        add("queuePush/queueLength/queuePop FIFO", (a, b) -> {
            expectEq(0L, call(a.queueLength(p + "q")));
            call(a.queuePush(p + "q", utf("first")));
            call(a.queuePush(p + "q", utf("second")));
            call(a.ping()); // the pushes have no answer; b reads the queue only once the server has them
            expectEq(2L, call(b.queueLength(p + "q")));
            expectText("first", call(b.queuePop(p + "q", CALL)));
            expectEq(1L, call(a.queueLength(p + "q")));
            expectText("second", call(b.queuePop(p + "q", CALL)));
            expectEq(0L, call(a.queueLength(p + "q")));
        });
        add("queuePop on an empty queue times out", (a, b) -> expectTimeout(() -> a.queuePop(p + "qe", SHORT), p + "qe"));
        add("queuePop released by another client's push", (a, b) -> {
            CompletableFuture<byte[]> got = b.queuePop(p + "q2", CALL).subscribeAsCompletionStage();
            Thread.sleep(50);
            expect(!got.isDone(), "queuePop returned from an empty queue");
            call(a.queuePush(p + "q2", utf("item")));
            expectText("item", got.get(CALL.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
        });
        add("describe", (a, b) -> expectEq(host + ":" + port, a.describe()));
    }

    private void add(String name, Body body) {
        checks.add(new Check(name, name.startsWith("queue") ? "queue" : name, body));
    }

    /** Runs every check; returns the number that did not pass (failed + unsupported). */
    int run() {
        Set<String> unsupportedGroups = new HashSet<>();
        for (Check c : checks) {
            if (unsupportedGroups.contains(c.group())) {
                unsupported++;
                out.println("UNSUPPORTED " + c.name() + ": not run, an earlier " + c.group() + " check was unsupported");
                continue;
            }
            try {
                ensureConnected();
                c.body().run(a, b);
                passed++;
                out.println("PASS        " + c.name());
            } catch (Mismatch e) {
                failed++;
                out.println("FAIL        " + c.name() + ": " + e.getMessage());
            } catch (Throwable e) {
                Throwable cause = unwrap(e);
                boolean lost = cause instanceof StoreException && !(cause instanceof StoreTimeoutException)
                        && (String.valueOf(cause.getMessage()).contains(" lost") || connectionLost());
                if (lost) {
                    unsupported++;
                    unsupportedGroups.add(c.group());
                    closeClients();
                    out.println("UNSUPPORTED " + c.name() + ": the server closed the connection (" + cause.getMessage() + ")");
                } else {
                    failed++;
                    out.println("FAIL        " + c.name() + ": " + cause);
                }
            }
        }
        closeClients();
        out.println(passed + " passed, " + failed + " failed"
                + (unsupported > 0 ? ", " + unsupported + " unsupported by the server" : ""));
        return failed + unsupported;
    }

    private void ensureConnected() {
        if (a == null || b == null) {
            closeClients();
            a = TcpStoreClient.connect(vertx, host, port, CALL).await().atMost(CALL.plusSeconds(1));
            b = TcpStoreClient.connect(vertx, host, port, CALL).await().atMost(CALL.plusSeconds(1));
        }
    }

    /** After a failure: is either connection dead? Then both are dropped and the next check reconnects. */
    private boolean connectionLost() {
        boolean lost = !alive(a) || !alive(b);
        if (lost) {
            closeClients();
        }
        return lost;
    }

    private static boolean alive(TcpStoreClient c) {
        try {
            c.ping().await().atMost(Duration.ofSeconds(2));
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void closeClients() {
        if (a != null) {
            a.close();
        }
        if (b != null) {
            b.close();
        }
        a = null;
        b = null;
    }

    // ---- expectations -----------------------------------------------------------------------

    private static <T> T call(Uni<T> uni) {
        return uni.await().atMost(CALL.plusSeconds(2));
    }

    @FunctionalInterface
    private interface Call {
        Uni<?> start();
    }

    private static void expectTimeout(Call call, String missingKey) throws Mismatch {
        long t0 = System.nanoTime();
        try {
            call.start().await().atMost(CALL);
        } catch (StoreTimeoutException e) {
            double ms = (System.nanoTime() - t0) / 1e6;
            expect(ms >= SHORT.toMillis() - 5, "timed out after " + ms + " ms, before the " + SHORT.toMillis() + " ms deadline");
            expect(e.getMessage() != null && e.getMessage().contains(missingKey),
                    "timeout message does not name " + missingKey + ": " + e.getMessage());
            return;
        }
        throw new Mismatch("expected a StoreTimeoutException, the call succeeded");
    }

    private static void expect(boolean ok, String what) throws Mismatch {
        if (!ok) {
            throw new Mismatch(what);
        }
    }

    private static void expectEq(Object expected, Object actual) throws Mismatch {
        expect(expected.equals(actual), "expected " + expected + ", got " + actual);
    }

    private static void expectText(String expected, byte[] actual) throws Mismatch {
        expect(actual != null && Arrays.equals(utf(expected), actual),
                "expected \"" + expected + "\", got " + (actual == null ? "null" : "\"" + new String(actual, StandardCharsets.UTF_8) + "\""));
    }

    private static void expectBytes(byte[] expected, byte[] actual) throws Mismatch {
        expect(Arrays.equals(expected, actual), "expected " + expected.length + " bytes, got "
                + (actual == null ? "null" : actual.length + " different bytes"));
    }

    private static byte[] utf(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof java.util.concurrent.ExecutionException || e instanceof java.util.concurrent.CompletionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
