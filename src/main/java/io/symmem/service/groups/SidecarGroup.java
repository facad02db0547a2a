package io.symmem.service.groups;

import io.symmem.store.StoreExchange;
import java.util.Arrays;
import java.util.List;

/**
 * A group as a rank's sidecar serves it over HTTP: its name, its world ranks (group rank i is
 * {@code worldRanks[i]}) and the exchange its collectives go through. The exchange is the one a Java
 * program makes for the same group ({@code new StoreExchange(store, name, groupRank, size)}, or the
 * façade's {@code world.group(name, ranks)}), so a rank served over HTTP and a rank that calls the Java
 * API meet in the same collectives.
 */
public record SidecarGroup(String name, int[] worldRanks, StoreExchange exchange, CallLanes lanes) {

    /** A group whose tagged lanes get their exchanges from {@code exchangeOfName} (name, group rank, size). */
    public static SidecarGroup of(String name, int[] worldRanks, int groupRank, ExchangeMaker exchangeOfName) {
        StoreExchange exchange = exchangeOfName.make(name, groupRank, worldRanks.length);
        return new SidecarGroup(name, worldRanks, exchange, new CallLanes(name, exchange,
                tag -> exchangeOfName.make(CallLanes.exchangeName(name, tag), groupRank, worldRanks.length)));
    }

    /** Makes a group's exchanges, as RankRuntime.exchange does. */
    @FunctionalInterface
    public interface ExchangeMaker {
        StoreExchange make(String name, int groupRank, int size);
    }

    public int size() {
        return worldRanks.length;
    }

    /** This rank's number in the group. */
    public int rank() {
        return exchange.rank();
    }

    public List<Integer> ranks() {
        return Arrays.stream(worldRanks).boxed().toList();
    }

    /** The world ranks of the given group ranks. */
    public List<Integer> toWorldRanks(List<Integer> groupRanks) {
        return groupRanks.stream().map(r -> r >= 0 && r < worldRanks.length ? worldRanks[r] : r).toList();
    }
}
