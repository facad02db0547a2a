package io.symmem;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.symmem.config.SymmemConfig;
import io.symmem.liveness.WorldFailure;
import io.symmem.store.GroupNames;
import io.symmem.store.GroupRanks;
import io.symmem.store.Store;
import io.symmem.world.WorldEvents;
import io.symmem.world.WorldMember;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

/**
 * This process's rank in a joined world: the groups it belongs to, the store, the world's health.
 * Made by {@link Symmem#fromEnvironment()} or {@link Symmem#builder()}; closing it leaves the world in
 * order (rank 0, which hosts the store, waits until every other rank is done with it) and releases
 * the backend.
 *
 * <pre>{@code
 * try (SymmemWorld world = Symmem.fromEnvironment()) {
 *     SymmemGroup pair = world.group("pair", 0, 1);        // on ranks 0 and 1 only
 *     try (SymmetricBuffer b = pair.allocate(DType.BFLOAT16, 4096)) {
 *         pair.allReduce(b, ReduceOp.AVG, Algorithm.ONE_SHOT);
 *     }
 * }
 * }</pre>
 *
 * When a peer dies (or the store goes away) every rank learns within the liveness bound
 * (SYMMEM_TIMEOUT_LIVENESS): store waits, barriers and collectives then fail at once, naming the rank,
 * instead of running into their deadlines; {@link #failure()} tells what happened.
 */
public final class SymmemWorld implements AutoCloseable {
    private final SymmemConfig config;
    private final Vertx vertx;
    private volatile WorldMember member;
    private volatile SymmemGroup worldGroup;
    private final List<SymmemGroup> groups = new ArrayList<>();
    private boolean closed;
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SymmemWorld.class);
    private boolean released;  // left the world and closed the backend (a refused close stops before that)

    private SymmemWorld(SymmemConfig config, Vertx vertx, WorldMember member) {
        this.config = config;
        this.vertx = vertx;
        this.member = member;
        this.worldGroup = new SymmemGroup(this, member, GroupNames.WORLD, IntStream.range(0, config.worldSize()).toArray());
        groups.add(worldGroup);
    }

    /**
     * Forms the world again after it was lost (a rank died or restarted, or the store's host did): this
     * rank gives up the lost generation and joins the next one, beside the other survivors (each calls
     * this) and the restarted rank; returns once every rank is in it, or throws past
     * SYMMEM_TIMEOUT_RENDEZVOUS. Every group and buffer made before is of the lost generation: a call on one
     * throws {@link GenerationLostException}; make the groups and buffers again ({@link #group()} is the new
     * world group). Where this rank hosts the store it keeps serving it, with every key and connection.
     *
     * <pre>{@code
     * try {
     *     world.group().allReduce(buffer, ReduceOp.SUM);
     * } catch (PeerLostException lost) {
     *     world.formAgain();                                   // every surviving rank does; the dead one restarts
     *     buffer = world.group().allocate(DType.FLOAT32, n);   // what the lost generation held is gone
     * }
     * }</pre>
     *
     * The native waits were aborted process-wide when the world failed; this clears that, so a second
     * world in the same process must not be relying on the abort.
     */
    public synchronized void formAgain() {
        checkOpen();
        WorldMember old = member;
        String why = "generation " + Math.max(0, old.generation()) + " of the world was lost ("
                + old.liveness().failure().map(WorldFailure::reason).orElse("this rank formed it again")
                + "): make it again (world.group(...)) and allocate its buffers again";
        for (SymmemGroup g : groups) {
            g.retire(why);
        }
        groups.clear();
        WorldMember joined = WorldReforming.next(old, config, vertx, attempt -> member = attempt);
        member = joined;
        worldGroup = new SymmemGroup(this, joined, GroupNames.WORLD, IntStream.range(0, config.worldSize()).toArray());
        groups.add(worldGroup);
        LOG.infof("rank %d formed its world again as generation %d", config.rank(), joined.generation());
    }

    /** The generation of the world this rank is in: 0 until the world first forms again. */
    public long generation() {
        return Math.max(0, member.generation());
    }

    /** Joins (blocking); on failure releases what was taken and throws the reason. */
    static SymmemWorld join(SymmemConfig config) {
        initMutinyOnce();
        Vertx vertx = Vertx.vertx();
        // No HTTP server here: peers see port 0 for this rank.
        WorldMember member = new WorldMember(config, vertx, new ObjectMapper(), 0, new WorldEvents() {
        });
        try {
            member.join();
            return new SymmemWorld(config, vertx, member);
        } catch (IOException | RuntimeException e) {
            member.close();
            VertxShutdown.close(vertx, VertxShutdown.LIMIT, config.rank());
            if (e instanceof IOException io) {
                throw new UncheckedIOException("rank " + config.rank() + " could not join its world: " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }

    /**
     * Mutiny's first use sets up context propagation (SmallRye's ContextManagerProvider), which fails
     * with "ContextManagerProvider already set" when two threads get there at once (two ranks of one
     * JVM joining together): the first use happens here, one thread at a time.
     */
    private static synchronized void initMutinyOnce() {
        // completionStage, not item: only the former decorates through the context propagation (the store
        // server's first listen does, and two ranks of one JVM raced there).
        Uni.createFrom().completionStage(java.util.concurrent.CompletableFuture.completedFuture(Boolean.TRUE)).await().indefinitely();
    }

    public int rank() {
        return config.rank();
    }

    /** Number of ranks in the world. */
    public int size() {
        return config.worldSize();
    }

    /** The backend that holds this world's buffers: host, cuda, nvshmem or nccl (auto resolved). */
    public String backend() {
        return member.backend().name();
    }

    /** The settings this world runs with. */
    public SymmemConfig config() {
        return config;
    }

    /** The group of every rank of the world (named {@code world}). */
    public SymmemGroup group() {
        return worldGroup;
    }

    /**
     * A group of some ranks of the world, made by each of its members (not by the others): rank
     * {@code worldRanks[i]} is the group's rank i. Every member must give the same name and ranks; they
     * check that they do before this returns (deadline SYMMEM_TIMEOUT_RENDEZVOUS). Groups made with the
     * same name follow each other: the k-th on one rank pairs with the k-th on the others.
     *
     * @param name letters, digits, '.', '_' and '-', at most 64; not {@code world}
     * @throws IllegalArgumentException naming a bad name, or ranks that are repeated, outside the world,
     *     or do not include this rank
     */
    public synchronized SymmemGroup group(String name, int... worldRanks) {
        checkOpen();
        GroupNames.check(name);
        int[] ranks = GroupRanks.check(name, worldRanks, rank(), size());
        SymmemGroup group = new SymmemGroup(this, member, name, ranks);
        try {
            group.agreeOnMembers(config.timeout().rendezvous());
        } catch (RuntimeException e) {
            group.close();
            throw e;
        }
        groups.add(group);
        return group;
    }

    /** As {@link #group(String, int...)}. */
    public SymmemGroup group(String name, List<Integer> worldRanks) {
        return group(name, worldRanks.stream().mapToInt(Integer::intValue).toArray());
    }

    /**
     * The world's store (under SYMMEM_RUN_ID's prefix when set): a key/value store with TCPStore's
     * semantics, for whatever small values the ranks need to share. Owned by the world: closing this
     * reference does nothing.
     */
    public Store store() {
        return new SharedStore(member.runStore());
    }

    /** Why the world can no longer work (a rank or the store gone), once that has happened. */
    public Optional<WorldFailure> failure() {
        io.symmem.liveness.Liveness liveness = member.liveness();
        return liveness == null ? Optional.empty() : liveness.failure();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the world of rank " + rank() + " is closed");
        }
    }

    /**
     * Leaves the world in order and releases everything: the groups' pools and buffers still open, the
     * store connections (rank 0: the store, once the others are done), the backend. When the world has
     * failed already, it does not wait for the peers that are gone. A buffer whose close is refused (a
     * call still running on it past its deadline, a captured graph still open) stops the close before
     * the backend goes: the refusal is thrown, and closing the world again goes on from there.
     */
    @Override
    public synchronized void close() {
        if (released) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        CloseRefusedException refused = null;
        for (int i = groups.size() - 1; i >= 0; i--) {
            try {
                groups.get(i).close();
            } catch (CloseRefusedException e) {
                refused = refused == null ? e : refused;
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (refused != null) {
            // A buffer still in use refused its close: the backend under it must stay. Closing again
            // (once that call has returned) goes on from here.
            throw refused;
        }
        released = true;
        try {
            if (member.joined() && member.liveness().failure().isEmpty()) {
                member.leave();
            }
        } catch (io.symmem.store.StoreConnectionLostException | io.symmem.liveness.PeerLostException worldFailed) {
            // In a world that is well, the store's host waits for every rank's leave before it goes: losing it,
            // or a peer, while leaving means the world failed under this rank (a peer noticed first and told
            // this rank through the buffers' out-of-step marks). Nothing is left to undo; the close goes on.
            LOG.infof("rank %d: the world failed while this rank was leaving it: %s", config.rank(), worldFailed.getMessage());
        } catch (RuntimeException e) {
            first = first == null ? e : first;
        } finally {
            member.close();
            VertxShutdown.close(vertx, VertxShutdown.LIMIT, config.rank());
        }
        if (first != null) {
            throw first;
        }
    }
}
