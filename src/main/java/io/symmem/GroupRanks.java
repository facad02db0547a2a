package io.symmem;

import java.util.Arrays;

/** The world ranks a group is made of: each once, inside the world, this rank among them. */
final class GroupRanks {
    private GroupRanks() {
    }

    /** A copy of {@code worldRanks} once checked; rank i of the group is {@code worldRanks[i]}. */
    static int[] check(String group, int[] worldRanks, int myRank, int worldSize) {
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

    static int indexOf(int[] worldRanks, int rank) {
        for (int i = 0; i < worldRanks.length; i++) {
            if (worldRanks[i] == rank) {
                return i;
            }
        }
        return -1;
    }
}
