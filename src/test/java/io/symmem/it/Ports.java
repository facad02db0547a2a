package io.symmem.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

final class Ports {
    private Ports() {
    }

    /** A port free on loopback right now. */
    static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
