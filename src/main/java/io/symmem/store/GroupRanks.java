package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The world ranks a group is made of: each once, inside the world, this rank among them. */
public final class GroupRanks {
    private GroupRanks() {
    }

    /** A copy of {@code worldRanks} once checked; rank i of the group is {@code worldRanks[i]}. */
    public static int[] check(String group, int[] worldRanks, int myRank, int worldSize) {
        if (worldRanks == null || worldRanks.length == 0) {
            throw new IllegalArgumentException("group '" + group + "' needs at least one rank");
        }
        boolean[] seen = new boolean[worldSize];
        boolean mine = false;
        for (int r : worldRanks) {
            if (r < 0 || r >= worldSize) {
                throw new IllegalArgumentException("group '" + group + "': rank " + r + " is outside the world of "
                        + worldSize + " ranks (0.." + (worldSize - 1) + ")");
            }
            if (seen[r]) {
                throw new IllegalArgumentException("group '" + group + "': rank " + r + " is listed twice in "
                        + Arrays.toString(worldRanks));
            }
            seen[r] = true;
            mine |= r == myRank;
        }
        if (!mine) {
            throw new IllegalArgumentException("group '" + group + "' of ranks " + Arrays.toString(worldRanks)
                    + " does not include this rank (" + myRank + "): only its members make a group");
        }
        return worldRanks.clone();
    }

    public static int indexOf(int[] worldRanks, int rank) {
        for (int i = 0; i < worldRanks.length; i++) {
            if (worldRanks[i] == rank) {
                return i;
            }
        }
        return -1;
    }

    /** The exchange name of a group's member check: never a group name itself ('~' is not allowed in those). */
    static String membersExchange(String group) {
        return group + "~members";
    }

    /**
     * Every member gives the same ranks in the same order, or every member fails with an
     * IllegalArgumentException saying how they differ. The check is indexed by the members' order in
     * the sorted list, which members that list the same ranks in another order still share (the
     * group's own rank numbers would collide). Collective over the members; a member that does not
     * come fails it with a {@link RendezvousTimeoutException} naming it.
     *
     * @param store the store of the world (under its run prefix), as the group's exchange uses it
     */
    public static Uni<Void> agree(Store store, String group, int[] worldRanks, int myWorldRank, Duration timeout) {
        int[] sorted = worldRanks.clone();
        Arrays.sort(sorted);
        StoreExchange check = new StoreExchange(store, membersExchange(group), Arrays.binarySearch(sorted, myWorldRank), sorted.length);
        String mine = Arrays.toString(worldRanks);
        return check.allGather(mine.getBytes(StandardCharsets.UTF_8), timeout).map(all -> {
            List<String> differing = new ArrayList<>();
            for (int i = 0; i < all.size(); i++) {
                String theirs = new String(all.get(i), StandardCharsets.UTF_8);
                if (!theirs.equals(mine)) {
                    differing.add("world rank " + sorted[i] + " made it of " + theirs);
                }
            }
            if (!differing.isEmpty()) {
                throw new IllegalArgumentException("the members of group '" + group + "' disagree on its ranks: rank "
                        + myWorldRank + " made it of " + mine + ", " + String.join(", ", differing));
            }
            return null;
        });
    }
}
