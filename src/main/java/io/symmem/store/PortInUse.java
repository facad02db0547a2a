package io.symmem.store;

import java.net.BindException;

/**
 * A server's failure to bind a port that is in use, wherever it sits in a chain of causes. The JDK's
 * sockets fail with {@link BindException}; Netty's epoll transport (what Vert.x uses on Linux) fails with
 * its own exception, which carries the errno but is no BindException.
 */
public final class PortInUse {
    private static final int EADDRINUSE = 98;

    private PortInUse() {
    }

    /** The failure that says the port is in use; null if none. */
    public static Throwable find(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            // By name and message: Netty's Errors class cannot even be loaded where its native library is not.
            boolean nettyBind = t.getClass().getName().equals("io.netty.channel.unix.Errors$NativeIoException")
                    && String.valueOf(t.getMessage()).startsWith("bind(..) failed with error(-" + EADDRINUSE + ")");
            if (t instanceof BindException || nettyBind) {
                return t;
            }
        }
        return null;
    }
}
