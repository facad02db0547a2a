package io.symmem.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.Optional;

/**
 * The ports the ranks of one `symmem launch` serve on: the HTTP API on SYMMEM_HTTP_PORT + LOCAL_RANK and
 * health and metrics on SYMMEM_MANAGEMENT_PORT + LOCAL_RANK, a block of N ports each. Two launches on one
 * machine would both take the default blocks (8700.., 9700..), and every rank of the second would fail
 * to bind after its world had formed. So, before any rank starts: a block the user left to its default
 * moves up to the first block of N ports that are free here; a block the user set must be free, or the
 * launch stops at once naming the taken port. Checked by binding each port, as the rank will, so a port
 * can still be taken between the check and the rank's bind by a process starting at the same moment.
 */
final class PortBlocks {
    static final int DEFAULT_HTTP_PORT = 8700;
    static final int DEFAULT_MANAGEMENT_PORT = 9700;
    private static final int LAST_PORT = 65535;

    /** Where a variable's block starts, and whether the launcher moved it from its default. */
    record Block(String variable, int base, boolean moved) {
    }

    /** A port of a block the user set is taken: the message names it and what to do. */
    static final class PortTakenException extends Exception {
        PortTakenException(String message) {
            super(message);
        }
    }

    @FunctionalInterface
    interface PortCheck {
        boolean isFree(String host, int port);
    }

    private final int ranks;
    private final PortCheck check;

    PortBlocks(int ranks, PortCheck check) {
        this.ranks = ranks;
        this.check = check;
    }

    PortBlocks(int ranks) {
        this(ranks, PortBlocks::bindable);
    }

    /** The HTTP block, from {@code env}'s SYMMEM_HTTP_PORT and SYMMEM_HTTP_HOST. */
    Block http(Map<String, String> env) throws PortTakenException {
        return block("SYMMEM_HTTP_PORT", env.get("SYMMEM_HTTP_PORT"), DEFAULT_HTTP_PORT,
                env.getOrDefault("SYMMEM_HTTP_HOST", "127.0.0.1"));
    }

    /** The management block; empty when SYMMEM_MANAGEMENT_PORT is 0 (every rank takes a free port itself). */
    Optional<Block> management(Map<String, String> env) throws PortTakenException {
        if ("0".equals(env.get("SYMMEM_MANAGEMENT_PORT"))) {
            return Optional.empty();
        }
        return Optional.of(block("SYMMEM_MANAGEMENT_PORT", env.get("SYMMEM_MANAGEMENT_PORT"), DEFAULT_MANAGEMENT_PORT,
                env.getOrDefault("SYMMEM_MANAGEMENT_HOST", "0.0.0.0")));
    }

    private Block block(String variable, String set, int fallback, String host) throws PortTakenException {
        if (set != null) {
            // The configuration check before the launch has made sure it is a port.
            int base = Integer.parseInt(set.trim());
            int taken = firstTaken(host, base);
            if (taken >= 0) {
                throw new PortTakenException("port " + taken + " on " + host + " is taken (" + variable + "=" + base
                        + " + LOCAL_RANK " + (taken - base) + "): another symmem launch or program serves there; set "
                        + variable + " to " + (ranks == 1 ? "a free port" : "a block of " + ranks + " free ports") + ", or unset it to let launch find one");
            }
            return new Block(variable, base, false);
        }
        for (int base = fallback; base + ranks - 1 <= LAST_PORT; base += ranks) {
            if (firstTaken(host, base) < 0) {
                return new Block(variable, base, base != fallback);
            }
        }
        throw new PortTakenException("no block of " + ranks + " free ports from " + fallback + " on " + host + " for "
                + variable + "; set it to a free block");
    }

    /**
     * The variables every rank gets so that the ranks of this launch serve on free blocks, each block that
     * moved announced on {@code out}; fails naming a taken port of a block the user set.
     */
    Map<String, String> rankEnvironment(Map<String, String> env, java.io.PrintStream out) throws PortTakenException {
        Map<String, String> ports = new java.util.LinkedHashMap<>();
        java.util.List<Block> blocks = new java.util.ArrayList<>();
        blocks.add(http(env));
        management(env).ifPresent(blocks::add);
        for (Block b : blocks) {
            ports.put(b.variable(), Integer.toString(b.base()));
            if (b.moved()) {
                out.println("symmem launch: the default block of " + b.variable() + " is taken (another launch?); the ranks use "
                        + (ranks == 1 ? "port " + b.base() : b.base() + ".." + (b.base() + ranks - 1)) + " (" + b.variable() + "="
                        + b.base() + ")");
            }
        }
        return ports;
    }

    /**
     * Fails naming the port when rank 0 is to host the store on a port given to launch (`--master-port`)
     * that is taken: its bind would only retry until the store deadline. Nothing to check when rank 0
     * binds a free port (0) or when the store is elsewhere (SYMMEM_STORE, SYMMEM_STORE_HOST other than rank0).
     */
    void checkStorePort(Map<String, String> env, String host, int port) throws PortTakenException {
        boolean rank0Hosts = env.get("SYMMEM_STORE") == null
                && "rank0".equalsIgnoreCase(env.getOrDefault("SYMMEM_STORE_HOST", "rank0"));
        if (port != 0 && rank0Hosts && !check.isFree(host, port)) {
            throw new PortTakenException("the store's port " + port + " on " + host + " is taken (--master-port " + port
                    + "; another run's store?): give another --master-port, or leave it out to let rank 0 bind a free one");
        }
    }

    /** The first port of [base, base + ranks) that is taken on {@code host}, or -1 when all are free. */
    private int firstTaken(String host, int base) {
        for (int port = base; port < base + ranks; port++) {
            if (port > LAST_PORT || !check.isFree(host, port)) {
                return port;
            }
        }
        return -1;
    }

    /**
     * True when a server socket binds {@code host:port} now, as the rank's server (Vert.x) will: address
     * reuse on, so a port in TIME_WAIT counts as free and a listening one does not.
     */
    static boolean bindable(String host, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(host, port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
