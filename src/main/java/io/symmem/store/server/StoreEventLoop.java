package io.symmem.store.server;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.symmem.store.StoreSpin;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jboss.logging.Logger;

/**
 * The store server's own event loop: one thread that serves every store connection and owns the
 * store's state, wrapped as a Vert.x event-loop context so the server still uses Vert.x's NetServer
 * and futures (a NetServer registers the connections it accepts on the event loop of the context
 * that listens).
 *
 * <p>Why not one of Vert.x's shared event loops: those also serve HTTP and everything else of the
 * rank, so a burst there would delay rendezvous; and their select strategy sleeps as soon as there
 * is nothing to do, which puts a thread wake-up into every store round trip. This loop polls for a
 * short window after activity ({@link SpinThenSelectStrategy}, window from {@link StoreSpin}).
 *
 * <p>The loop matches Vert.x's transport (accepted channels must be registered on a loop of their
 * own kind): epoll when Vert.x runs on it, NIO with the JDK transport. Any other native transport
 * falls back to a shared Vert.x event loop, without polling. The thread starts on first use.
 */
final class StoreEventLoop implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(StoreEventLoop.class);

    private static final AtomicInteger SERIAL = new AtomicInteger();

    private final EventLoopGroup group;
    private final Context context;
    private final String description;

    private StoreEventLoop(EventLoopGroup group, Context context, String description) {
        this.group = group;
        this.context = context;
        this.description = description;
    }

    static StoreEventLoop create(Vertx vertx, long spinNanos) {
        // Vert.x 4.5's transport classes (internal names): a rename lands in the logged fallback below.
        String transport = VertxInternals.transportName(vertx);
        // Daemon threads: a store left open must not keep the JVM alive.
        ThreadFactory threads = VertxInternals.daemonLoopThreads(vertx, () -> "symmem-store-server-" + SERIAL.incrementAndGet());
        EventLoopGroup group;
        String kind;
        if (transport.equals("JDKTransport")) {
            group = new NioEventLoopGroup(1, threads, SelectorProvider.provider(), () -> new SpinThenSelectStrategy(spinNanos));
            kind = "nio";
        } else if (transport.equals("EpollTransport") && Epoll.isAvailable()) {
            group = new EpollEventLoopGroup(1, threads, () -> new SpinThenSelectStrategy(spinNanos));
            kind = "epoll";
        } else {
            LOG.infof("store server: Vert.x transport %s has no dedicated store loop here; using a shared event loop", transport);
            return new StoreEventLoop(null, VertxInternals.sharedLoopContext(vertx), "shared Vert.x event loop (" + transport + ")");
        }
        Context context = VertxInternals.contextOn(vertx, group.next());
        return new StoreEventLoop(group, context, kind + " loop, polls " + spinNanos / 1_000 + " µs after activity");
    }

    Context context() {
        return context;
    }

    /** For logs: which loop serves the store and how it waits. */
    String description() {
        return description;
    }

    /** Stops the thread (once the server has closed its sockets); a no-op for a shared loop. */
    @Override
    public void close() {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
