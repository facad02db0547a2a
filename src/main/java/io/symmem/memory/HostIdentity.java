package io.symmem.memory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Identifies this machine (and boot), so that ranks that can share memory recognise each other.
 * The boot id differs between containers of different hosts even when host names collide.
 */
public final class HostIdentity {
    private static final String ID = compute();

    private HostIdentity() {
    }

    public static String id() {
        return ID;
    }

    private static String compute() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        try {
            return host + "/" + Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException | RuntimeException e) {
            return host;
        }
    }
}
