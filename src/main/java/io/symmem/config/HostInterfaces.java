package io.symmem.config;

import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.List;

/** The names of this host's network interfaces, as the start-up checks compare them with a spec. */
final class HostInterfaces {
    private HostInterfaces() {
    }

    /**
     * Every interface, up or down, and their sub-interfaces (eth0:1): a spec naming any of them is not
     * a typo. Null when the host will not say, so that the check is skipped rather than made up.
     */
    static List<String> names() {
        try {
            List<String> names = new ArrayList<>();
            NetworkInterface.networkInterfaces().forEach(ni -> {
                names.add(ni.getName());
                ni.subInterfaces().forEach(sub -> names.add(sub.getName()));
            });
            return names;
        } catch (SocketException unavailable) {
            return null;
        }
    }
}
