package io.symmem.store;

import io.symmem.store.etcd.EtcdCluster;
import io.symmem.store.etcd.EtcdStore;
import io.symmem.store.etcd.EtcdTarget;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The whole conformance suite of {@link StoreSemanticsTest}, against the store on a real three-member
 * etcd cluster: this class only replaces the stores under test (its own {@code stores()} hides the
 * parent's). Each test gets its own job prefix, as jobs sharing a cluster do, so counts are per test.
 */
class EtcdStoreSemanticsTest extends StoreSemanticsTest {

    private static final AtomicInteger TESTS = new AtomicInteger();
    private static EtcdCluster cluster;
    private String prefix;
    /** Closed here: a prefix view does not close the store under it. */
    private final List<EtcdStore> connected = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = EtcdCluster.startOrSkip(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void ownPrefix() {
        prefix = "semantics/t" + TESTS.incrementAndGet();
    }

    static Stream<Arguments> stores() {
        return Stream.of(
                Arguments.of("etcd", (Function<StoreSemanticsTest, Store>) t -> ((EtcdStoreSemanticsTest) t).connect()),
                Arguments.of("etcd-prefix", (Function<StoreSemanticsTest, Store>) t -> new PrefixStore("p",
                        ((EtcdStoreSemanticsTest) t).connect())));
    }

    private Store connect() {
        EtcdStore store = EtcdStore.connect(EtcdTarget.parse(cluster.target(prefix)), Duration.ofSeconds(10));
        connected.add(store);
        return store;
    }

    @AfterEach
    void closeClients() {
        connected.forEach(EtcdStore::close);
    }

    @Override
    protected String storeAddress() {
        return EtcdTarget.parse(cluster.target(prefix)).describe();
    }
}
