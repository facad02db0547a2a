package io.symmem.nvshmem;

import java.util.List;

/**
 * An NVSHMEM team made for a group of world ranks: the PEs start, start + stride, ... (NVSHMEM's teams
 * are strided). {@code team} is NVSHMEM's handle on members, -1 on the ranks outside it.
 */
public record NvshmemTeam(List<Integer> worldRanks, int start, int stride, int team) {
    public boolean isMember() {
        return team >= 0;
    }

    /**
     * The strided shape of {@code ranks} (ascending, distinct), or why NVSHMEM cannot make a team of
     * them (a message naming the ranks).
     */
    static int[] stridedShape(List<Integer> ranks) {
        if (ranks.isEmpty()) {
            throw new IllegalArgumentException("a team needs at least one rank");
        }
        int start = ranks.get(0);
        int stride = ranks.size() > 1 ? ranks.get(1) - ranks.get(0) : 1;
        for (int i = 0; i < ranks.size(); i++) {
            if (ranks.get(i) != start + i * stride || stride <= 0) {
                throw new IllegalArgumentException("ranks " + ranks + " are not equally spaced in ascending order: an NVSHMEM "
                        + "team is strided (start, start + stride, ...); a group of other ranks works on the nvshmem "
                        + "backend without a team (symmem's collectives do not need one)");
            }
        }
        return new int[] {start, stride, ranks.size()};
    }
}
