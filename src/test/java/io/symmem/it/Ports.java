package io.symmem.it;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the processes a test starts, all below Linux's ephemeral range (32768+). A port found free by
 * binding port 0 is an ephemeral one: between the test's check and the rank's own bind, the kernel may hand
 * it to any socket that binds port 0 or connects out (a rank's outgoing connection, a server on a free port),
 * and the rank then fails with "Address already in use". Below that range only an explicit bind takes a port.
 * Single ports and blocks come from ranges of their own, so that a store port never falls inside a block.
 */
final class Ports {
    /** Blocks (HTTP and management bases: base + local rank). */
    private static final int BLOCK_LOW = 20000;
    private static final int BLOCK_HIGH = 28000;
    /** Single ports (stores, MASTER_PORT). */
    private static final int SINGLE_LOW = 28000;
    private static final int SINGLE_HIGH = 32000;

    private Ports() {
    }

    /** A port free on loopback right now, that no port-0 bind or outgoing connection can take from the test. */
    static int free() throws IOException {
        return freeIn(SINGLE_LOW, SINGLE_HIGH, 1);
    }

    /**
     * A base port whose {@code count} ports are all free right now: ranks serve HTTP on base + local rank, and a
     * port from {@link #free()} can never fall inside.
     */
    static int freeBlock(int count) throws IOException {
        return freeIn(BLOCK_LOW, BLOCK_HIGH, count);
    }

    private static int freeIn(int low, int high, int count) throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(low, high - count + 1);
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
        throw new IOException("no block of " + count + " free ports between " + low + " and " + high);
    }
}
