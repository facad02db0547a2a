package io.symmem.config;

import io.symmem.store.HostForm;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * An address to listen on: the wildcard (0.0.0.0 or ::), a loopback address, an address of one of
 * this machine's interfaces, or a host name whose addresses are all such. Checked before start-up,
 * so that a typo or another machine's address is one line naming the variable instead of a bind
 * failure deep in the HTTP server's start.
 */
public record LocalAddressKind() implements ValueKind {

    @Override
    public Optional<String> refusal(String value) {
        Optional<String> form = HostForm.problem(value);
        if (form.isPresent()) {
            return form;
        }
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(value); // literals are parsed, names looked up
        } catch (UnknownHostException e) {
            return Optional.of("does not resolve");
        }
        for (InetAddress address : addresses) {
            if (!isLocal(address)) {
                return Optional.of(address.getHostAddress() + " is not an address of this machine");
            }
        }
        return Optional.empty();
    }

    private static boolean isLocal(InetAddress address) {
        if (address.isAnyLocalAddress() || address.isLoopbackAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return false;
        }
    }
}
