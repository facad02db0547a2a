package io.symmem.service.groups;

import io.smallrye.mutiny.Uni;
import io.symmem.service.RankRuntime;
import io.symmem.service.http.ApiProblem;
import io.symmem.store.GroupNames;
import io.symmem.store.GroupRanks;
import io.symmem.store.Store;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * The groups this rank's sidecar serves: the world (every rank, made on first use) and the subgroups
 * made through POST /v1/groups. Making a subgroup is collective over its members (each member's
 * process asks its own sidecar): they agree on its ranks through the store before it exists anywhere.
 * Asking again for a group that exists with the same ranks returns it; with other ranks is a conflict.
 */
@ApplicationScoped
public class SidecarGroups {
    @Inject
    RankRuntime runtime;

    private final Map<String, CompletableFuture<SidecarGroup>> groups = new ConcurrentHashMap<>();
    /** The world generation each group was made in: a group of a lost generation is not served. */
    private final Map<String, Long> madeIn = new ConcurrentHashMap<>();

    /** The group of every rank. Its exchange is the sidecar's own (not the world rendezvous'), made once. */
    public SidecarGroup world() {
        return get(GroupNames.WORLD);
    }

    /** An existing group (the world included), or a 404 listing the groups there are. */
    public SidecarGroup get(String name) {
        long now = runtime.generation();
        Long generation = madeIn.get(name);
        if (generation != null && generation != now) {
            groups.remove(name);
            madeIn.remove(name, generation);
            if (!GroupNames.WORLD.equals(name)) {
                throw new ApiProblem(410, "group '" + name + "' was made in generation " + generation + " of the world, which "
                        + "was lost; the world formed again as generation " + now + ": make the group again with POST "
                        + "/v1/groups on every member");
            }
        }
        if (GroupNames.WORLD.equals(name)) {
            return groups.computeIfAbsent(name, n -> {
                madeIn.put(n, now);
                return CompletableFuture.completedFuture(makeWorld());
            }).join();
        }
        CompletableFuture<SidecarGroup> made = groups.get(name);
        SidecarGroup group = made == null ? null : ready(made);
        if (group == null) {
            throw new ApiProblem(404, "no group '" + name + "' on rank " + runtime.config().rank() + " (groups here: "
                    + String.join(", ", names()) + "); make it with POST /v1/groups on every member");
        }
        return group;
    }

    /** Names of the groups made (or being made) here, the world first. */
    public List<String> names() {
        List<String> names = new ArrayList<>();
        names.add(GroupNames.WORLD);
        long now = runtime.generation();
        groups.keySet().stream().filter(n -> !n.equals(GroupNames.WORLD) && madeIn.getOrDefault(n, now) == now).sorted()
                .forEach(names::add);
        return names;
    }

    /** The groups that exist here now (not those still agreeing on their members). */
    public List<SidecarGroup> list() {
        List<SidecarGroup> all = new ArrayList<>();
        all.add(world());
        for (String name : names()) {
            if (!name.equals(GroupNames.WORLD)) {
                SidecarGroup g = ready(groups.get(name));
                if (g != null) {
                    all.add(g);
                }
            }
        }
        return all;
    }

    /**
     * Makes group {@code name} of {@code worldRanks} with the other members (each asks its own sidecar).
     * The Uni's item says whether it was made now (true) or existed already with the same ranks.
     */
    public Uni<Made> create(String name, int[] worldRanks, Duration timeout) {
        try {
            GroupNames.check(name);
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(400, e.getMessage());
        }
        int rank = runtime.config().rank();
        int[] ranks;
        try {
            ranks = GroupRanks.check(name, worldRanks, rank, runtime.config().worldSize());
        } catch (IllegalArgumentException e) {
            throw new ApiProblem(400, e.getMessage());
        }
        Store store = runStore();
        forgetIfOfALostGeneration(name);
        CompletableFuture<SidecarGroup> fresh = new CompletableFuture<>();
        CompletableFuture<SidecarGroup> made = groups.putIfAbsent(name, fresh);
        boolean mine = made == null;
        if (mine) {
            made = fresh;
            madeIn.put(name, runtime.generation());
            GroupRanks.agree(store, name, ranks, rank, timeout).subscribe().with(
                    ok -> fresh.complete(SidecarGroup.of(name, ranks, GroupRanks.indexOf(ranks, rank), runtime::exchange)),
                    failure -> {
                        groups.remove(name, fresh); // a failed agreement leaves nothing behind: it may be tried again
                        fresh.completeExceptionally(failure);
                    });
        }
        return Uni.createFrom().completionStage(made).map(group -> {
            if (!Arrays.equals(group.worldRanks(), ranks)) {
                throw new ApiProblem(409, "group '" + name + "' exists on rank " + rank + " with world ranks "
                        + Arrays.toString(group.worldRanks()) + ", not " + Arrays.toString(ranks) + "; choose another name");
            }
            return new Made(group, mine);
        });
    }

    /** A group made in a generation of the world that was lost is gone: the name may be used again. */
    private void forgetIfOfALostGeneration(String name) {
        Long generation = madeIn.get(name);
        if (generation != null && generation != runtime.generation() && madeIn.remove(name, generation)) {
            groups.remove(name);
        }
    }

    /** A group and whether this call made it. */
    public record Made(SidecarGroup group, boolean created) {
    }

    private SidecarGroup makeWorld() {
        int[] all = IntStream.range(0, runtime.config().worldSize()).toArray();
        return SidecarGroup.of(GroupNames.WORLD, all, runtime.config().rank(), runtime::exchange);
    }

    private Store runStore() {
        Store store = runtime.runStore();
        if (store == null) {
            throw new ApiProblem(503, "rank " + runtime.config().rank() + " has not reached the store yet (state "
                    + runtime.state() + ")");
        }
        return store;
    }

    /** The group if its agreement has ended well, else null (still agreeing, or failed). */
    private static SidecarGroup ready(CompletableFuture<SidecarGroup> made) {
        return made != null && made.isDone() && !made.isCompletedExceptionally() ? made.join() : null;
    }
}
