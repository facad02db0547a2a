package io.symmem.store;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The form of a host to connect to: an IPv4 address (four decimal parts, 0..255, no leading zeros), an
 * IPv6 address, or a host name. Only the form is checked: the name of a peer (a Kubernetes service, say)
 * may resolve only once it is up. The store's endpoints (etcd's) and the configuration's hosts
 * (io.symmem.config.HostKind) are checked by it alike.
 */
public final class HostForm {
    private static final Pattern DIGITS_AND_DOTS = Pattern.compile("[0-9.]+");
    private static final Pattern IPV4_PART = Pattern.compile("0|[1-9][0-9]{0,2}");
    // RFC 1123 labels; '_' too, which resolvers accept and Docker Compose service names use.
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?");

    private HostForm() {
    }

    /** Why {@code value} is no IP address or host name, or empty when it is one. Never looks anything up. */
    public static Optional<String> problem(String value) {
        if (DIGITS_AND_DOTS.matcher(value).matches()) {
            return ipv4Problem(value);
        }
        if (value.indexOf(':') >= 0) {
            // A literal with ':' is parsed as IPv6 by InetAddress, without a lookup.
            try {
                InetAddress.getByName(value.startsWith("[") ? value : "[" + value + "]");
                return Optional.empty();
            } catch (UnknownHostException e) {
                return Optional.of("not an IPv6 address");
            }
        }
        String name = value.endsWith(".") ? value.substring(0, value.length() - 1) : value;
        if (name.isEmpty() || name.length() > 253) {
            return Optional.of("not a host name");
        }
        for (String label : name.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return Optional.of("not a host name");
            }
        }
        return Optional.empty();
    }

    private static Optional<String> ipv4Problem(String value) {
        // Only dotted quads: InetAddress would read "127.1" as 127.0.0.1, and "010.0.0.1" means 10 to
        // Java but 8 to inet_aton; a value that reads differently in different places is refused.
        String[] parts = value.split("\\.", -1);
        if (parts.length != 4) {
            return Optional.of("not an IPv4 address (four parts, e.g. 10.0.0.1)");
        }
        for (String part : parts) {
            if (!IPV4_PART.matcher(part).matches() || Integer.parseInt(part) > 255) {
                return Optional.of("not an IPv4 address (each part 0..255, no leading zeros)");
            }
        }
        return Optional.empty();
    }
}
