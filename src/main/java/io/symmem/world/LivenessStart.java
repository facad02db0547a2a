package io.symmem.world;

import io.symmem.config.StoreHost;
import io.symmem.config.SymmemConfig;
import io.symmem.liveness.LeaseMembers;
import io.symmem.liveness.Liveness;
import io.symmem.liveness.LivenessAgent;
import io.symmem.store.Store;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.store.etcd.EtcdStore;
import io.symmem.store.server.StoreServer;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Starts a member's liveness on connections of its own: one holds the member key, the departure WAIT
 * and the beats; the other the monitor's reads. On the hosting rank both are the in-process store; on
 * etcd one client multiplexes every call (a watch never holds up a read) and the member key is a lease.
 */
final class LivenessStart {
    private final SymmemConfig config;
    private final StoreConnector connector;
    private final UnaryOperator<Store> scoped;
    private final String leaseScope;
    private final List<Store> connections;

    /**
     * @param scoped the store as the member's run and generation see it
     * @param leaseScope the same scope as a key prefix, for etcd's leases
     * @param connections where the connections made here are added, for the member to close
     */
    LivenessStart(SymmemConfig config, StoreConnector connector, UnaryOperator<Store> scoped, String leaseScope,
            List<Store> connections) {
        this.config = config;
        this.connector = connector;
        this.scoped = scoped;
        this.leaseScope = leaseScope;
        this.connections = connections;
    }

    LivenessAgent start(StoreServer server, EtcdStore etcdStore, Liveness liveness, String storeAddress,
            WorldEvents events, Duration storeTimeout) {
        boolean hostedByRank0 = config.store().host() == StoreHost.RANK0 && etcdStore == null;
        Store eventsStore;
        Store probe;
        TcpStoreClient eventsClient = null;
        if (etcdStore != null) {
            eventsStore = scoped.apply(etcdStore);
            probe = eventsStore;
        } else if (server != null) {
            eventsStore = scoped.apply(server.localStore());
            probe = eventsStore;
        } else {
            eventsClient = connector.connect(storeTimeout);
            connections.add(eventsClient);
            Store probeClient = connector.connect(storeTimeout);
            connections.add(probeClient);
            eventsStore = scoped.apply(eventsClient);
            probe = scoped.apply(probeClient);
        }
        LivenessAgent agent = new LivenessAgent(liveness, eventsStore, probe, config.worldSize(),
                config.timeout().liveness(), storeAddress, hostedByRank0, events::worldRecord);
        if (etcdStore != null) {
            agent.useLeases(new LeaseMembers(etcdStore, leaseScope));
        }
        if (eventsClient != null) {
            eventsClient.whenConnectionLost(agent::connectionLost);
        }
        agent.start(storeTimeout);
        return agent;
    }
}
