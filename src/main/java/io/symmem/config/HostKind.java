package io.symmem.config;

import io.symmem.store.HostForm;
import java.util.Optional;

/**
 * A host to connect to: an IPv4 address (four decimal parts, 0..255, no leading zeros), an IPv6
 * address, or a host name. Only the form is checked ({@link HostForm}): the name of a peer (a Kubernetes
 * service, say) may resolve only once it is up.
 */
public record HostKind() implements ValueKind {

    @Override
    public Optional<String> refusal(String value) {
        return HostForm.problem(value);
    }
}
