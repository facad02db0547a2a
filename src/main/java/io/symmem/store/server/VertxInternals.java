package io.symmem.store.server;

import io.netty.channel.EventLoop;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.impl.VertxThread;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.NetSocketInternal;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

/**
 * The only place the store touches Vert.x internals (4.5), each for something Vert.x's public API
 * cannot do:
 *
 * <ul>
 *   <li>a Vert.x context on the store's own Netty loop, whose threads are Vert.x threads: the server
 *       keeps Vert.x's NetServer and futures but serves from a loop that polls after activity
 *       ({@link StoreEventLoop}: a wake-up less per round trip), apart from the rank's shared loops;</li>
 *   <li>a fresh context on a shared loop when the transport has no store loop (the public
 *       getOrCreateContext would hand back the calling thread's sticky context);</li>
 *   <li>the Netty loop under a context, to queue slices after the loop has read its sockets
 *       ({@link NextTurn}); runOnContext would run them before any socket is read;</li>
 *   <li>closing a socket at once, dropping what is queued for a client that reads nothing: the public
 *       close() waits for queued bytes to go out.</li>
 * </ul>
 */
final class VertxInternals {

    private VertxInternals() {}

    /** The simple name of Vert.x's transport class ("JDKTransport", "EpollTransport", ...). */
    static String transportName(Vertx vertx) {
        return ((VertxInternal) vertx).transport().getClass().getSimpleName();
    }

    /** Threads for a Netty loop that runs Vert.x contexts, with Vert.x's blocked-loop checks. */
    static ThreadFactory daemonLoopThreads(Vertx vertx, Supplier<String> names) {
        VertxInternal internal = (VertxInternal) vertx;
        return runnable -> {
            VertxThread thread = new VertxThread(runnable, names.get(), false,
                    internal.maxEventLoopExecTime(), internal.maxEventLoopExecTimeUnit());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** A Vert.x event-loop context on {@code loop}. */
    static Context contextOn(Vertx vertx, EventLoop loop) {
        return ((VertxInternal) vertx).createEventLoopContext(loop, null, VertxInternals.class.getClassLoader());
    }

    /** A new context on one of Vert.x's shared event loops. */
    static Context sharedLoopContext(Vertx vertx) {
        return ((VertxInternal) vertx).createEventLoopContext();
    }

    /** The Netty loop that runs {@code context}'s tasks. */
    static EventLoop eventLoopOf(Context context) {
        return ((ContextInternal) context).nettyEventLoop();
    }

    /**
     * Closes the socket now, dropping what was queued for it. Not socket.close() nor channel().close():
     * both go through Vert.x's handler, which first waits for the queued bytes to go out; closing from
     * Vert.x's handler context goes past it, to the socket.
     */
    static void abort(NetSocket socket) {
        ((NetSocketInternal) socket).channelHandlerContext().close();
    }
}
