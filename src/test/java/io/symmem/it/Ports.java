package io.symmem.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

final class Ports {
    /** HTTP bases come from below Linux's ephemeral range (32768+), where free() finds store ports. */
    private static final int BLOCK_LOW = 20000;
    private static final int BLOCK_HIGH = 32000;

    private Ports() {
    }

    /** A port free on loopback right now (an ephemeral one). */
    static int free() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * A base port whose {@code count} ports are all free right now, below the ephemeral range: ranks
     * serve HTTP on base + local rank, and a store port from {@link #free()} can never fall inside.
     */
    static int freeBlock(int count) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(BLOCK_LOW, BLOCK_HIGH - count);
            List<ServerSocket> held = new ArrayList<>();
            try {
                for (int p = base; p < base + count; p++) {
                    held.add(new ServerSocket(p, 1, InetAddress.getLoopbackAddress()));
                }
                return base;
            } catch (IOException taken) {
                // some port of this block is in use: try another block
            } finally {
                for (ServerSocket s : held) {
                    s.close();
                }
            }
        }
        throw new IOException("no block of " + count + " free ports between " + BLOCK_LOW + " and " + BLOCK_HIGH);
    }
}
