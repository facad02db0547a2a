package io.symmem.store.server;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;

/**
 * A server-side socket whose reads a test delivers by hand, on the server's loop, so which requests
 * one read batch holds is the test's choice and not the kernel's. What the server writes is kept for
 * the test to read. Only the calls the store server makes are answered; any other fails loudly.
 */
final class HandFedSocket {

    private final String name;
    private final NetSocket socket;
    private Handler<Buffer> reads;
    private final Buffer written = Buffer.buffer();
    private int taken;

    HandFedSocket(String name) {
        this.name = name;
        this.socket = (NetSocket) Proxy.newProxyInstance(NetSocket.class.getClassLoader(), new Class<?>[] {NetSocket.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "handler" -> {
                        reads = castHandler(args[0]);
                        yield proxy;
                    }
                    case "closeHandler", "exceptionHandler", "pause", "resume", "drainHandler" -> proxy;
                    case "remoteAddress" -> SocketAddress.inetSocketAddress(1, "127.0.0.1");
                    case "write" -> {
                        synchronized (written) {
                            written.appendBuffer((Buffer) args[0]);
                        }
                        yield Future.succeededFuture();
                    }
                    case "close" -> Future.succeededFuture();
                    case "toString" -> "hand-fed socket " + name;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException("HandFedSocket " + name + ": the store server called "
                            + method.getName() + Arrays.toString(method.getParameterTypes()));
                });
    }

    @SuppressWarnings("unchecked")
    private static Handler<Buffer> castHandler(Object handler) {
        return (Handler<Buffer>) handler;
    }

    NetSocket socket() {
        return socket;
    }

    /** Delivers {@code frame} (up to its position) as one read; call it on the server's loop. */
    void deliver(ByteBuffer frame) {
        reads.handle(Buffer.buffer(Arrays.copyOf(frame.array(), frame.position())));
    }

    /** The next byte the server wrote, waiting up to {@code timeout} for it. */
    int nextAnswerByte(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            synchronized (written) {
                if (written.length() > taken) {
                    return written.getByte(taken++) & 0xff;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the store server wrote no answer on " + name + " within " + timeout);
            }
            Thread.sleep(1);
        }
    }
}
