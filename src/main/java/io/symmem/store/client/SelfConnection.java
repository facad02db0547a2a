package io.symmem.store.client;

import java.io.IOException;

/**
 * A client that retries connecting to a port of this machine where nothing listens can connect to
 * itself: TCP's simultaneous open pairs the socket with itself when the kernel picks the target port
 * as the source port. Such a "connection" would echo our own requests back and would hold the port
 * the store wants to bind again, so clients drop it and retry.
 */
final class SelfConnection {
    private SelfConnection() {
    }

    static boolean is(int localPort, int remotePort, String localHost, String remoteHost) {
        return localPort == remotePort && localHost != null && localHost.equals(remoteHost);
    }

    static IOException error(String store) {
        return new IOException("connected to itself while store " + store + " is down (TCP simultaneous open)");
    }
}
