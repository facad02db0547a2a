package io.symmem.config;

import java.util.Collection;
import java.util.List;

/**
 * An interface list as NCCL and NVSHMEM read it, e.g. {@code NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME}: a
 * leading {@code ^} selects the interfaces that match none of the names, otherwise those that match
 * one; after it, a leading {@code =} makes each name exact, otherwise each is a prefix ({@code eth}
 * matches {@code eth0} and {@code eth1}). The form itself is {@link NameListKind}'s to check.
 */
public record InterfaceSpec(boolean exclude, boolean exact, List<String> names) {

    public static InterfaceSpec parse(String spec) {
        boolean exclude = spec.startsWith("^");
        String rest = exclude ? spec.substring(1) : spec;
        boolean exact = rest.startsWith("=");
        String body = body(spec);
        return new InterfaceSpec(exclude, exact, body.isEmpty() ? List.of() : List.of(body.split(",", -1)));
    }

    /** The list after its {@code ^} and {@code =} markers, in that order. */
    static String body(String spec) {
        String rest = spec.startsWith("^") ? spec.substring(1) : spec;
        return rest.startsWith("=") ? rest.substring(1) : rest;
    }

    /** The interfaces, among {@code available}, that this spec lets the library use, in their order. */
    public List<String> selected(Collection<String> available) {
        return available.stream().filter(name -> exclude != matchesAny(name)).toList();
    }

    private boolean matchesAny(String interfaceName) {
        return names.stream().anyMatch(n -> exact ? interfaceName.equals(n) : interfaceName.startsWith(n));
    }
}
