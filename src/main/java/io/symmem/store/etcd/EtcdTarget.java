package io.symmem.store.etcd;

import io.symmem.store.HostForm;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where an etcd-backed store lives, as {@code SYMMEM_STORE} gives it:
 * {@code etcd://host:port[,host:port...]/prefix}. The endpoints are the cluster's client URLs (any
 * member will do; the client fails over between them); the prefix scopes every key of the job, so
 * that several jobs can share one cluster.
 *
 * @param endpoints the members to connect to, in the order given
 * @param prefix the job's key prefix, without leading or trailing '/'
 */
public record EtcdTarget(List<Endpoint> endpoints, String prefix) {

    public static final String SCHEME = "etcd://";
    /** Segments of the prefix: the characters a run id may hold, so a prefix never needs escaping. */
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._-]{1,128}");

    /** One member's client address. IPv6 literals are kept without brackets. */
    public record Endpoint(String host, int port) {
        /** The URL the gRPC client dials. */
        public URI uri() {
            return URI.create("http://" + hostPort());
        }

        public String hostPort() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    public EtcdTarget {
        endpoints = List.copyOf(endpoints);
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("an etcd store needs at least one endpoint");
        }
        problemWithPrefix(prefix).ifPresent(p -> {
            throw new IllegalArgumentException(p);
        });
    }

    /**
     * Parses {@code text}.
     *
     * @throws IllegalArgumentException with a one-line reason when it is not of the form
     *     {@code etcd://host:port[,host:port...]/prefix}
     */
    public static EtcdTarget parse(String text) {
        Optional<String> problem = problem(text);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        String rest = text.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        List<Endpoint> endpoints = new ArrayList<>();
        for (String part : rest.substring(0, slash).split(",", -1)) {
            endpoints.add(endpoint(part));
        }
        return new EtcdTarget(endpoints, rest.substring(slash + 1));
    }

    /** Why {@code text} is not an etcd store address, in a short phrase; empty when it is one. */
    public static Optional<String> problem(String text) {
        if (text == null || !text.startsWith(SCHEME)) {
            int colon = text == null ? -1 : text.indexOf("://");
            return Optional.of(colon > 0 ? "the scheme must be etcd://, not " + text.substring(0, colon + 3) : "it must start with etcd://");
        }
        String rest = text.substring(SCHEME.length());
        int slash = rest.indexOf('/');
        if (slash < 0 || slash == rest.length() - 1) {
            return Optional.of("no key prefix after the endpoints (etcd://host:port/prefix)");
        }
        String authority = rest.substring(0, slash);
        if (authority.isEmpty()) {
            return Optional.of("no endpoint before the prefix (etcd://host:port/prefix)");
        }
        for (String part : authority.split(",", -1)) {
            Optional<String> endpointProblem = endpointProblem(part);
            if (endpointProblem.isPresent()) {
                return endpointProblem;
            }
        }
        return problemWithPrefix(rest.substring(slash + 1));
    }

    private static Optional<String> endpointProblem(String part) {
        if (part.isEmpty()) {
            return Optional.of("an empty endpoint in the list (endpoints are host:port separated by commas)");
        }
        int colon = part.lastIndexOf(':');
        boolean bracketed = part.startsWith("[");
        if (colon < 0 || (bracketed && colon < part.indexOf(']'))) {
            return Optional.of("endpoint '" + part + "' has no port (host:port, e.g. 10.0.0.1:2379)");
        }
        String host = part.substring(0, colon);
        if (bracketed) {
            if (!host.endsWith("]")) {
                return Optional.of("endpoint '" + part + "' is no [IPv6]:port");
            }
            host = host.substring(1, host.length() - 1);
        } else if (host.indexOf(':') >= 0) {
            return Optional.of("endpoint '" + part + "': write an IPv6 address in brackets, [::1]:2379");
        }
        if (host.isEmpty()) {
            return Optional.of("endpoint '" + part + "' has no host");
        }
        Optional<String> hostProblem = HostForm.problem(host);
        if (hostProblem.isPresent()) {
            return Optional.of("endpoint '" + part + "': " + hostProblem.get());
        }
        String port = part.substring(colon + 1);
        if (!port.matches("[1-9][0-9]{0,4}") || Integer.parseInt(port) > 65535) {
            return Optional.of("endpoint '" + part + "': the port must be 1..65535");
        }
        return Optional.empty();
    }

    private static Endpoint endpoint(String part) {
        int colon = part.lastIndexOf(':');
        String host = part.substring(0, colon);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Endpoint(host, Integer.parseInt(part.substring(colon + 1)));
    }

    private static Optional<String> problemWithPrefix(String prefix) {
        if (prefix == null || prefix.isEmpty()) {
            return Optional.of("no key prefix after the endpoints (etcd://host:port/prefix)");
        }
        for (String segment : prefix.split("/", -1)) {
            if (!SEGMENT.matcher(segment).matches()) {
                return Optional.of("prefix '" + prefix + "': segments separated by single '/' of 1 to 128 letters, digits, "
                        + "'.', '_' or '-'");
            }
        }
        return Optional.empty();
    }

    /** The address as written: {@code etcd://h1:p1,h2:p2/prefix}; what error messages name. */
    public String describe() {
        return SCHEME + String.join(",", endpoints.stream().map(Endpoint::hostPort).toList()) + "/" + prefix;
    }

    @Override
    public String toString() {
        return describe();
    }
}
