package io.symmem.config;

import io.symmem.store.etcd.EtcdTarget;
import java.util.Optional;

/** An etcd store address, {@code etcd://host:port[,host:port...]/prefix} (see {@link EtcdTarget}). */
public record EtcdStoreKind() implements ValueKind {

    @Override
    public Optional<String> refusal(String value) {
        return EtcdTarget.problem(value);
    }
}
