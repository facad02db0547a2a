package io.symmem.nvshmem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.store.StoreExchange;
import io.symmem.store.client.TcpStoreClient;
import io.symmem.testing.ThreadRanks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The NVSHMEM world's protocol through a real store, four ranks as threads, with NVSHMEM itself
 * replaced: who calls what, in which order, what agreement is asked for, and which rank a failure
 * names. (The real library runs on the GPU machine: scripts/gpu/run-nvshmem.sh.)
 */
class NvshmemWorldTest {
    private static final int WORLD = 4;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private ThreadRanks ranks;

    @BeforeEach
    void start() {
        ranks = new ThreadRanks(WORLD, TIMEOUT);
    }

    @AfterEach
    void stop() throws InterruptedException {
        ranks.close();
    }

    /** NVSHMEM as the ranks of one test share it: its bootstrap returns once every PE has called init. */
    static final class FakeNvshmem {
        final int world;
        final CountDownLatch joined;
        final AtomicInteger uniqueIds = new AtomicInteger();
        final Map<Integer, byte[]> initUid = new ConcurrentHashMap<>();
        final AtomicInteger finalizes = new AtomicInteger();
        final AtomicInteger splits = new AtomicInteger();
        final AtomicBoolean aborted = new AtomicBoolean();
        volatile boolean bootstrapHangs;
        volatile int liveBuffers;
        /** SYMMEM_CUDA_PUSH_SCRATCH_BYTES per rank as libsymmem would read it; absent: its default. */
        final Map<Integer, Long> pushScratch = new ConcurrentHashMap<>();
        /** SYMMEM_CUDA_LL128_MAX_BYTES per rank likewise. */
        final Map<Integer, Long> ll128Max = new ConcurrentHashMap<>();

        FakeNvshmem(int world) {
            this.world = world;
            this.joined = new CountDownLatch(world);
        }

        NvshmemCalls forRank(int rank) {
            return new NvshmemCalls() {
                @Override
                public byte[] uniqueId() {
                    uniqueIds.incrementAndGet();
                    byte[] id = new byte[128];
                    Arrays.fill(id, (byte) 'u');
                    return id;
                }

                @Override
                public void init(int device, int r, int w, byte[] uid) {
                    initUid.put(r, uid);
                    joined.countDown();
                    try {
                        if (bootstrapHangs) {
                            Thread.sleep(Long.MAX_VALUE);
                        }
                        joined.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }

                @Override
                public void finalizeWorld() {
                    finalizes.incrementAndGet();
                }

                @Override
                public int teamSplitStrided(int start, int stride, int size) {
                    splits.incrementAndGet();
                    boolean member = rank >= start && (rank - start) % stride == 0 && (rank - start) / stride < size;
                    return member ? 7 : -1;
                }

                @Override
                public int teamTranslatePe(int team, int teamPe) {
                    throw new UnsupportedOperationException("set per test");
                }

                @Override
                public void teamDestroy(int team) {
                }

                @Override
                public int liveBuffers() {
                    return liveBuffers;
                }

                @Override
                public boolean aborted() {
                    return aborted.get();
                }

                @Override
                public long pushScratchBytes() {
                    return pushScratch.getOrDefault(rank, 4L << 20);
                }

                @Override
                public long ll128MaxBytes() {
                    return ll128Max.getOrDefault(rank, 4L << 20);
                }
            };
        }
    }

    private NvshmemWorld join(TcpStoreClient store, int rank, NvshmemCalls calls, Duration timeout) {
        return NvshmemWorld.join(name -> new StoreExchange(store, name, rank, WORLD), rank, WORLD, rank, calls, timeout);
    }

    private static <T> List<T> all(List<Future<T>> futures) throws Exception {
        List<T> out = new ArrayList<>();
        for (Future<T> f : futures) {
            out.add(f.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    private static List<Throwable> failures(List<? extends Future<?>> futures) throws Exception {
        List<Throwable> out = new ArrayList<>();
        for (Future<?> f : futures) {
            try {
                f.get(60, TimeUnit.SECONDS);
                out.add(null);
            } catch (ExecutionException e) {
                out.add(e.getCause());
            }
        }
        return out;
    }

    @Test
    void everyPeJoinsWithRank0sUniqueId() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        all(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                return join(store, rank, nv.forRank(rank), TIMEOUT);
            }
        }));
        assertThat(nv.uniqueIds).hasValue(1);
        assertThat(nv.initUid).hasSize(WORLD);
        nv.initUid.values().forEach(uid -> assertThat(uid).containsOnly((byte) 'u').hasSize(128));
    }

    @Test
    void aMissingRankIsNamedAndNobodyEntersNvshmem() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<Throwable> errors = failures(ranks.run(3, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                return join(store, rank, nv.forRank(rank), Duration.ofSeconds(1));
            }
        }));
        for (Throwable e : errors) {
            assertThat(e).isNotNull();
            assertThat(e.getMessage()).contains("joining the NVSHMEM world (no rank has entered NVSHMEM yet)")
                    .contains("rank(s) [3]");
        }
        assertThat(nv.initUid).isEmpty();
    }

    @Test
    void aStuckBootstrapEndsAtTheDeadlineSayingEveryRankHadReachedIt() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        nv.bootstrapHangs = true;
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                return join(store, rank, nv.forRank(rank), Duration.ofMillis(1500));
            }
        }));
        for (Throwable e : errors) {
            assertThat(e).hasMessageContaining("NVSHMEM's bootstrap").hasMessageContaining("did not finish within 1500 ms")
                    .hasMessageContaining("every rank had reached it").hasMessageContaining("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME");
        }
    }

    @Test
    void anAbortEndsTheWaitForNvshmemAtOnce() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        nv.bootstrapHangs = true;
        new Thread(() -> {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException ignored) {
                return;
            }
            nv.aborted.set(true);
        }).start();
        long t0 = System.nanoTime();
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                return join(store, rank, nv.forRank(rank), Duration.ofSeconds(30));
            }
        }));
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)).isLessThan(20);
        for (Throwable e : errors) {
            assertThat(e).hasMessageContaining("abandoned").hasMessageContaining("a peer is gone");
        }
    }

    @Test
    void heapCallsThatDifferAreRefusedOnEveryRankNamingEach() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                w.agreeAllocation("world", 1024, TIMEOUT);
                // Rank 2 allocates a different size; rank 3 frees instead of allocating.
                if (rank == 3) {
                    w.agreeFree("world", 1024, TIMEOUT);
                } else {
                    w.agreeAllocation("world", rank == 2 ? 2048 : 4096, TIMEOUT);
                }
                return w;
            }
        }));
        for (Throwable e : errors) {
            assertThat(e).isInstanceOf(NvshmemMismatchException.class).hasMessageContaining("heap call 1 differs")
                    .hasMessageContaining("rank 2: allocate 2048 bytes").hasMessageContaining("rank 3: free 1024 bytes")
                    .hasMessageContaining("rank 0: allocate 4096 bytes");
        }
    }

    @Test
    void anAllocationWithDifferentPushScratchSettingsIsRefusedOnEveryRankNamingEachValue() throws Exception {
        // Same size everywhere, but rank 1 runs with SYMMEM_CUDA_PUSH_SCRATCH_BYTES=0: its pad region,
        // hence its nvshmem_malloc, would be smaller than the others'. A free does not depend on it.
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        nv.pushScratch.put(1, 0L);
        assertAllocationRefusedOnEveryRank(nv, true, "heap call 1 (allocate 8388608 bytes for group 'world')",
                "SYMMEM_CUDA_PUSH_SCRATCH_BYTES", "rank 0: 4194304, rank 1: 0, rank 2: 4194304, rank 3: 4194304");
    }

    @Test
    void anAllocationWithDifferentLl128SettingsIsRefusedOnEveryRankNamingEachValue() throws Exception {
        // Same size and push scratch everywhere, but rank 2 runs with SYMMEM_CUDA_LL128_MAX_BYTES=0: its
        // pad region has no 128-byte-line area, so its nvshmem_malloc would be smaller than the others'.
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        nv.ll128Max.put(2, 0L);
        assertAllocationRefusedOnEveryRank(nv, false, "heap call 0 (allocate 8388608 bytes for group 'world')",
                "SYMMEM_CUDA_LL128_MAX_BYTES", "rank 0: 4194304, rank 1: 4194304, rank 2: 0, rank 3: 4194304");
    }

    /**
     * Every rank allocates 8 MiB (after agreeing on a free first, if {@code freeFirst}) with {@code nv}'s settings; each
     * must be refused before nvshmem_malloc, naming the heap call, {@code variable} (and no other) and each rank's value.
     */
    private void assertAllocationRefusedOnEveryRank(FakeNvshmem nv, boolean freeFirst, String heapCall, String variable,
            String values) throws Exception {
        AtomicInteger mallocs = new AtomicInteger();
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                if (freeFirst) {
                    w.agreeFree("world", 8 << 20, TIMEOUT);
                }
                return w.allocate("world", 8 << 20, TIMEOUT, mallocs::incrementAndGet);
            }
        }));
        String other = variable.equals(NvshmemCalls.PUSH_SCRATCH_VARIABLE) ? NvshmemCalls.LL128_MAX_VARIABLE
                : NvshmemCalls.PUSH_SCRATCH_VARIABLE;
        for (Throwable e : errors) {
            assertThat(e).isInstanceOf(NvshmemMismatchException.class).hasMessageContaining(heapCall)
                    .hasMessageContaining(variable + ", which sizes each buffer's pad region, differs")
                    .hasMessageContaining(values).hasMessageNotContaining(other)
                    .hasMessageContaining("to the same value on every rank").hasMessageContaining("nothing was allocated");
        }
        assertThat(mallocs).as("no rank entered nvshmem_malloc").hasValue(0);
    }

    @Test
    void aHeapCallStuckInsideNvshmemEndsAtItsDeadlineAndClosesTheHeapToTheRank() throws Exception {
        // Every rank agrees; then rank 3's nvshmem_malloc never returns (as when a peer never enters
        // it, or device work never ends): without a deadline of its own it would hold rank 3 for ever.
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        CountDownLatch never = new CountDownLatch(1);
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                w.allocate("world", 4096, Duration.ofMillis(1500), () -> {
                    if (rank == 3) {
                        try {
                            never.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return "buffer";
                });
                return w;
            }
        }));
        try {
            for (int r = 0; r < 3; r++) {
                assertThat(errors.get(r)).as("rank " + r).isNull();
            }
            assertThat(errors.get(3)).isInstanceOf(NvshmemStuckException.class)
                    .hasMessageContaining("nvshmem_malloc of 4096 bytes for group 'world' (PE 3)")
                    .hasMessageContaining("did not finish within 1500 ms although every rank agreed on it through the store");
        } finally {
            never.countDown();
        }
    }

    @Test
    void afterAStuckHeapCallTheNextIsRefusedAtOnceNamingIt() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(1);
        CountDownLatch never = new CountDownLatch(1);
        try (TcpStoreClient store = ranks.client()) {
            NvshmemWorld w = NvshmemWorld.join(name -> new StoreExchange(store, name, 0, 1), 0, 1, 0, nv.forRank(0), TIMEOUT);
            assertThatThrownBy(() -> w.free("g", 1024, Duration.ofMillis(300), () -> {
                try {
                    never.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            })).isInstanceOf(NvshmemStuckException.class).hasMessageContaining("nvshmem_free of 1024 bytes for group 'g'");
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> w.allocate("g", 2048, TIMEOUT, () -> "never made"))
                    .hasMessageContaining("nvshmem_malloc of 2048 bytes for group 'g' refused")
                    .hasMessageContaining("nvshmem_free of 1024 bytes for group 'g' (PE 0) never returned");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(TIMEOUT.toMillis() / 2);
        } finally {
            never.countDown();
        }
    }

    @Test
    void subgroupAllocationsThenAWorldOneNeverHang() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<NvshmemWorld> worlds = all(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                // Two halves allocate for their own groups at the same time, then everyone for the world.
                w.agreeAllocation(rank < 2 ? "half-a" : "half-b", 4096, TIMEOUT);
                StoreExchange half = new StoreExchange(store, rank < 2 ? "half-a" : "half-b", rank % 2, 2);
                half.barrier(TIMEOUT).await().atMost(TIMEOUT);
                w.agreeAllocation("world", 8192, TIMEOUT);
                w.agreeFree("world", 8192, TIMEOUT);
                w.agreeFree(rank < 2 ? "half-a" : "half-b", 4096, TIMEOUT);
                return w;
            }
        }));
        assertThat(worlds).hasSize(WORLD);
    }

    @Test
    void teamsAreStridedAgreedAndMadeOnce() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<List<NvshmemTeam>> teams = all(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemCalls base = nv.forRank(rank);
                NvshmemCalls calls = new DelegatingCalls(base) {
                    @Override
                    public int teamTranslatePe(int team, int teamPe) {
                        return 1 + 2 * teamPe; // the odd ranks
                    }
                };
                NvshmemWorld w = join(store, rank, calls, TIMEOUT);
                NvshmemTeam odd = w.team(List.of(1, 3), TIMEOUT);
                NvshmemTeam again = w.team(List.of(1, 3), TIMEOUT);
                assertThat(again).isSameAs(odd);
                assertThatThrownBy(() -> w.team(List.of(0, 1, 3), TIMEOUT)).hasMessageContaining("not equally spaced");
                return List.of(odd);
            }
        }));
        for (int r = 0; r < WORLD; r++) {
            NvshmemTeam t = teams.get(r).get(0);
            assertThat(t.isMember()).isEqualTo(r % 2 == 1);
            assertThat(t.start()).isEqualTo(1);
            assertThat(t.stride()).isEqualTo(2);
        }
        assertThat(nv.splits).hasValue(WORLD);
    }

    @Test
    @Timeout(value = 40, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aTeamSplitStuckInsideNvshmemEndsAtItsDeadlineAndClosesHeapAndTeamsToTheRank() throws Exception {
        // Every rank names the same team; then rank 3's nvshmem_team_split_strided never returns (it
        // waits inside NVSHMEM for every PE, with no deadline of its own).
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        CountDownLatch never = new CountDownLatch(1);
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemCalls calls = new DelegatingCalls(nv.forRank(rank)) {
                    @Override
                    public int teamSplitStrided(int start, int stride, int size) {
                        if (rank == 3) {
                            try {
                                never.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        return super.teamSplitStrided(start, stride, size);
                    }

                    @Override
                    public int teamTranslatePe(int team, int teamPe) {
                        return 1 + 2 * teamPe;
                    }
                };
                NvshmemWorld w = join(store, rank, calls, TIMEOUT);
                try {
                    return w.team(List.of(1, 3), Duration.ofMillis(1500));
                } catch (NvshmemStuckException e) {
                    long t0 = System.nanoTime();
                    assertThatThrownBy(() -> w.allocate("world", 64, TIMEOUT, () -> "never made"))
                            .hasMessageContaining("nvshmem_malloc of 64 bytes for group 'world' refused")
                            .hasMessageContaining("nvshmem_team_split_strided for ranks [1, 3] (PE 3) never returned");
                    assertThatThrownBy(() -> w.team(List.of(0, 2), TIMEOUT)).hasMessageContaining("refused");
                    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(TIMEOUT.toMillis() / 2);
                    assertThat(w.finalizeWorld(TIMEOUT)).isFalse();
                    throw e;
                }
            }
        }));
        try {
            for (int r = 0; r < 3; r++) {
                assertThat(errors.get(r)).as("rank " + r).isNull();
            }
            assertThat(errors.get(3)).isInstanceOf(NvshmemStuckException.class)
                    .hasMessageContaining("nvshmem_team_split_strided for ranks [1, 3] (PE 3)")
                    .hasMessageContaining("did not finish within 1500 ms although every rank agreed on it through the store");
            assertThat(nv.finalizes).hasValue(0);
        } finally {
            never.countDown();
        }
    }

    @Test
    @Timeout(value = 40, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aTeamDestroyStuckAtFinalizeEndsAtItsDeadlineNamingTheTeam() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(1);
        CountDownLatch never = new CountDownLatch(1);
        NvshmemCalls calls = new DelegatingCalls(nv.forRank(0)) {
            @Override
            public int teamTranslatePe(int team, int teamPe) {
                return teamPe;
            }

            @Override
            public void teamDestroy(int team) {
                try {
                    never.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (TcpStoreClient store = ranks.client()) {
            NvshmemWorld w = NvshmemWorld.join(name -> new StoreExchange(store, "solo-" + name, 0, 1), 0, 1, 0, calls,
                    TIMEOUT);
            w.team(List.of(0), TIMEOUT);
            assertThatThrownBy(() -> w.finalizeWorld(Duration.ofMillis(800))).isInstanceOf(NvshmemStuckException.class)
                    .hasMessageContaining("nvshmem_team_destroy of the team of ranks [0] (PE 0)")
                    .hasMessageContaining("did not finish within 800 ms");
            assertThat(nv.finalizes).hasValue(0);
            assertThat(w.finalizeWorld(TIMEOUT)).isFalse();
        } finally {
            never.countDown();
        }
    }

    @Test
    void ranksNamingDifferentTeamsAreRefused() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<Throwable> errors = failures(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                return w.team(rank == 0 ? List.of(0, 1) : List.of(2, 3), TIMEOUT);
            }
        }));
        for (Throwable e : errors) {
            assertThat(e).isInstanceOf(NvshmemMismatchException.class).hasMessageContaining("must name the same ranks");
        }
        assertThat(nv.splits).hasValue(0);
    }

    @Test
    void finalizeRunsOnceInOrderAndIsSkippedWhenItWouldHang() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        List<Boolean> done = all(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = join(store, rank, nv.forRank(rank), TIMEOUT);
                boolean first = w.finalizeWorld(TIMEOUT);
                assertThat(w.finalizeWorld(TIMEOUT)).isTrue();
                assertThatThrownBy(() -> w.agreeAllocation("world", 1, TIMEOUT)).hasMessageContaining("finalized");
                return first;
            }
        }));
        assertThat(done).containsOnly(true);
        assertThat(nv.finalizes).hasValue(WORLD);

        FakeNvshmem live = new FakeNvshmem(1);
        live.liveBuffers = 2;
        try (TcpStoreClient store = ranks.client()) {
            NvshmemWorld w = NvshmemWorld.join(name -> new StoreExchange(store, "solo-" + name, 0, 1), 0, 1, 0,
                    live.forRank(0), TIMEOUT);
            assertThat(w.finalizeWorld(TIMEOUT)).isFalse();
            live.liveBuffers = 0;
            live.aborted.set(true);
            assertThat(w.finalizeWorld(TIMEOUT)).isFalse();
        }
        assertThat(live.finalizes).hasValue(0);
    }

    @Test
    void withSeveralRanksOnOneGpuTeamsAreRefusedAndFinalizeIsLeftOut() throws Exception {
        FakeNvshmem nv = new FakeNvshmem(WORLD);
        String shared = "ranks [0, 1] share GPU 0 of host h";
        all(ranks.run(WORLD, rank -> () -> {
            try (TcpStoreClient store = ranks.client()) {
                NvshmemWorld w = NvshmemWorld.join(name -> new StoreExchange(store, name, rank, WORLD), rank, WORLD, 0,
                        nv.forRank(rank), shared, TIMEOUT);
                assertThatThrownBy(() -> w.team(List.of(0, 1), TIMEOUT)).isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining(shared).hasMessageContaining("without a team");
                w.agreeAllocation("world", 64, TIMEOUT);
                assertThat(w.finalizeWorld(TIMEOUT)).isFalse();
                return w;
            }
        }));
        assertThat(nv.splits).hasValue(0);
        assertThat(nv.finalizes).hasValue(0);
    }

    /** Forwards every call; tests override one. */
    static class DelegatingCalls implements NvshmemCalls {
        private final NvshmemCalls d;

        DelegatingCalls(NvshmemCalls d) {
            this.d = d;
        }

        public byte[] uniqueId() {
            return d.uniqueId();
        }

        public void init(int device, int rank, int world, byte[] uid) {
            d.init(device, rank, world, uid);
        }

        public void finalizeWorld() {
            d.finalizeWorld();
        }

        public int teamSplitStrided(int start, int stride, int size) {
            return d.teamSplitStrided(start, stride, size);
        }

        public int teamTranslatePe(int team, int teamPe) {
            return d.teamTranslatePe(team, teamPe);
        }

        public void teamDestroy(int team) {
            d.teamDestroy(team);
        }

        public int liveBuffers() {
            return d.liveBuffers();
        }

        public boolean aborted() {
            return d.aborted();
        }

        public long pushScratchBytes() {
            return d.pushScratchBytes();
        }

        public long ll128MaxBytes() {
            return d.ll128MaxBytes();
        }
    }
}
