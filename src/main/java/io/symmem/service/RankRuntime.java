package io.symmem.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.config.InvalidConfigurationException;
import io.symmem.config.SymmemConfig;
import io.symmem.config.SymmemConfigValidator;
import io.symmem.memory.HostIdentity;
import io.symmem.memory.SymmetricAllocator;
import io.symmem.nativ.NativeBackend;
import io.symmem.store.StoreExchange;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreServer;
import io.symmem.store.TcpStoreClient;
import io.vertx.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * One rank of the world: hosts the store (rank 0), connects to it, opens the native backend and
 * performs the world rendezvous. Started by the rank commands (serve, demo), not by every process,
 * so that the launcher and the config command never touch the store or the device.
 */
@ApplicationScoped
public class RankRuntime {
    private static final Logger LOG = Logger.getLogger(RankRuntime.class);
    public static final String WORLD = "world";
    private static final String LEFT_PREFIX = "symmem/world/left/";

    public enum State { NOT_STARTED, JOINING, READY, FAILED }

    @Inject
    SymmemConfig config;
    @Inject
    Vertx vertx;
    @Inject
    ObjectMapper json;
    @ConfigProperty(name = "quarkus.http.port")
    int httpPort;

    private volatile State state = State.NOT_STARTED;
    private volatile String error;
    private final CompletableFuture<Void> ready = new CompletableFuture<>();
    private StoreServer server;
    private TcpStoreClient store;
    private NativeBackend backend;
    private StoreExchange world;
    private SymmetricAllocator allocator;
    private volatile List<PeerInfo> peers = List.of();

    /** Joins the world; returns at once, {@link #awaitReady} waits for the outcome. Idempotent. */
    public synchronized void start() {
        if (state != State.NOT_STARTED) {
            return;
        }
        state = State.JOINING;
        Thread joiner = new Thread(this::join, "symmem-world-rendezvous");
        joiner.setDaemon(true);
        joiner.start();
    }

    public SymmemConfig config() {
        return config;
    }

    public State state() {
        return state;
    }

    public String error() {
        return error;
    }

    public List<PeerInfo> peers() {
        return peers;
    }

    /** Blocks until the world rendezvous has succeeded, or throws its failure. */
    public void awaitReady(Duration timeout) {
        try {
            ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("rank " + config.rank() + " did not finish the world rendezvous within " + timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the world rendezvous");
        }
    }

    public NativeBackend backend() {
        return backend;
    }

    public StoreExchange world() {
        return world;
    }

    public SymmetricAllocator allocator() {
        return allocator;
    }

    public String storeAddress() {
        return config.masterAddr() + ":" + config.masterPort();
    }

    /** A new exchange for a group of this world (its own key scope and rounds). */
    public StoreExchange exchange(String group, int rank, int worldSize) {
        return new StoreExchange(store, group, rank, worldSize);
    }

    private void join() {
        try {
            List<String> problems = SymmemConfigValidator.problems(config);
            if (!problems.isEmpty()) {
                throw new InvalidConfigurationException(problems);
            }
            Duration storeTimeout = config.timeout().store();
            if (config.rank() == 0) {
                server = new StoreServer(vertx, StoreLimits.defaults());
                server.listen(config.masterAddr(), config.masterPort()).await().atMost(storeTimeout);
                LOG.infof("rank 0 hosts the store at %s", storeAddress());
            }
            store = TcpStoreClient.connect(vertx, config.masterAddr(), config.masterPort(), storeTimeout)
                    .await().atMost(storeTimeout.plusSeconds(5));
            backend = BackendSelector.open(config.backend(), config.effectiveLocalRank());
            allocator = new SymmetricAllocator(backend, config.timeout().barrier());
            world = new StoreExchange(store, WORLD, config.rank(), config.worldSize());
            peers = rendezvous(config.timeout().rendezvous());
            state = State.READY;
            LOG.infof("rank %d of %d joined the world (backend %s, device %s)", config.rank(), config.worldSize(),
                    backend.name(), backend.deviceName());
            ready.complete(null);
        } catch (RuntimeException | IOException e) {
            error = e.getMessage();
            state = State.FAILED;
            LOG.errorf("rank %d failed to join the world: %s", config.rank(), e.getMessage());
            ready.completeExceptionally(e instanceof RuntimeException re ? re : new IllegalStateException(e));
        }
    }

    private List<PeerInfo> rendezvous(Duration timeout) throws IOException {
        PeerInfo mine = new PeerInfo(config.rank(), config.effectiveLocalRank(), HostIdentity.id(),
                ProcessHandle.current().pid(), httpPort, backend.name(), backend.device(), backend.deviceName());
        List<byte[]> all = world.allGather(json.writeValueAsBytes(mine), timeout).await().atMost(timeout.plusSeconds(5));
        List<PeerInfo> result = new ArrayList<>(all.size());
        for (byte[] bytes : all) {
            result.add(json.readValue(bytes, PeerInfo.class));
        }
        return List.copyOf(result);
    }

    /**
     * Leaves the world in order: every rank reports that it no longer needs the store, and rank 0,
     * which hosts it, waits for those reports (up to the store deadline) before it may shut down.
     */
    public void leave() {
        if (state != State.READY) {
            return;
        }
        Duration timeout = config.timeout().store();
        if (config.rank() != 0) {
            store.set(LEFT_PREFIX + config.rank(), new byte[] {1}).await().atMost(timeout);
            return;
        }
        List<String> others = new ArrayList<>();
        for (int r = 1; r < config.worldSize(); r++) {
            others.add(LEFT_PREFIX + r);
        }
        if (!others.isEmpty()) {
            store.await(others, timeout).await().atMost(timeout.plusSeconds(5));
        }
    }

    @PreDestroy
    synchronized void stop() {
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
        if (backend != null) {
            backend.close();
        }
    }
}
