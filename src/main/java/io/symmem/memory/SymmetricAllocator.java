package io.symmem.memory;

import io.symmem.nativ.Fds;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeChannel;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeNvshmem;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclWindow;
import io.symmem.nvshmem.NvshmemWorld;
import io.symmem.store.StoreExchange;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Allocates symmetric buffers: the collective {@link #allocate} is PyTorch's empty() + rendezvous()
 * in one step. Descriptors travel through the store (sizes are checked there, so a mismatch fails on
 * every rank with the same message); file descriptors travel over a fresh Unix-socket channel.
 */
public final class SymmetricAllocator {
    private final NativeBackend backend;
    private final Duration barrierTimeout;
    private final NvshmemWorld nvshmem;
    private final NcclGroups ncclGroups;

    public SymmetricAllocator(NativeBackend backend, Duration barrierTimeout) {
        this(backend, barrierTimeout, null, null);
    }

    /**
     * {@code nvshmem}: the joined NVSHMEM world, required for the nvshmem backend; {@code ncclGroups}:
     * the rank's NCCL communicators, required for the nccl backend (each buffer is registered as an
     * NCCL window of its group's communicator). Null otherwise.
     */
    public SymmetricAllocator(NativeBackend backend, Duration barrierTimeout, NvshmemWorld nvshmem,
            NcclGroups ncclGroups) {
        if (backend.isNvshmem() && nvshmem == null) {
            throw new IllegalArgumentException("the nvshmem backend allocates through a joined NVSHMEM world");
        }
        if (backend.isNccl() && ncclGroups == null) {
            throw new IllegalArgumentException("the nccl backend registers its buffers with the rank's NCCL communicators");
        }
        this.backend = backend;
        this.barrierTimeout = barrierTimeout;
        this.nvshmem = nvshmem;
        this.ncclGroups = ncclGroups;
    }

    public NativeBackend backend() {
        return backend;
    }

    /**
     * Collective over the ranks of {@code group}: every rank asks for {@code sizeBytes}, and each gets
     * a {@link SymmetricMemory} that maps every peer's buffer. Fails within {@code timeout} naming the
     * ranks that did not join, or on every rank naming the sizes if they differ.
     */
    public SymmetricMemory allocate(StoreExchange group, long sizeBytes, Duration timeout) {
        return allocate(group, "allocate", sizeBytes, timeout);
    }

    /**
     * As {@link #allocate(StoreExchange, long, Duration)}, pairing only with ranks whose call carries the
     * same {@code label} (who allocates: a thread, a pool): ranks whose labels differ all fail the
     * allocation, naming both, instead of pairing one caller's buffer with another's.
     */
    public SymmetricMemory allocate(StoreExchange group, String label, long sizeBytes, Duration timeout) {
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("symmetric buffer size must be positive, got " + sizeBytes + " bytes");
        }
        if (group.worldSize() > NativeCore.maxWorld()) {
            throw new IllegalArgumentException("group '" + group.groupName() + "' has " + group.worldSize()
                    + " ranks; symmetric buffers support at most " + NativeCore.maxWorld());
        }
        if (nvshmem != null) {
            return allocateOnNvshmemHeap(group, label, sizeBytes, timeout);
        }
        String channelName = "symmem-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();
        try (NativeChannel channel = new NativeChannel(channelName)) {
            PeerDescriptor mine = new PeerDescriptor(sizeBytes, HostIdentity.id(), backend.name(), channelName);
            List<PeerDescriptor> peers = gather(group, label, mine, timeout);
            checkAgreement(group.groupName(), peers);
            NativeBuffer buffer = backend.allocate(sizeBytes);
            try {
                List<String> names = peers.stream().map(PeerDescriptor::channelName).toList();
                int[] fds = channel.allGatherFds(names, group.rank(), 0, buffer.exportFd(), timeout);
                try {
                    buffer.importPeers(group.rank(), fds);
                } finally {
                    Fds.closeAll(fds);
                }
                // Nobody uses a peer's buffer before every peer has mapped everyone's.
                group.barrier(timeout).await().atMost(timeout.plusSeconds(5));
                if (ncclGroups != null) {
                    return registeredWithNccl(group, buffer, timeout);
                }
                return new SymmetricMemory(buffer, group.groupName(), group.rank(), group.worldSize(), barrierTimeout);
            } catch (RuntimeException e) {
                buffer.close();
                throw e;
            }
        }
    }

    /**
     * nccl: the buffer becomes an NCCL window of its group's communicator (collective; NCCL's
     * collectives on it may then use symmetric kernels); freeing it deregisters, then frees.
     */
    private SymmetricMemory registeredWithNccl(StoreExchange group, NativeBuffer buffer, Duration timeout) {
        NcclWindow window = ncclGroups.register(group, buffer, timeout);
        Runnable release = () -> {
            try {
                window.close();
            } finally {
                buffer.close();
            }
        };
        return new SymmetricMemory(buffer, group.groupName(), group.rank(), group.worldSize(), barrierTimeout, release);
    }

    /**
     * nvshmem: the heap allocation is collective over the whole world (NVSHMEM's rule), so every rank of
     * the world calls allocate at this point, each for its own group; they agree first (same size, same
     * order), then allocate, then bind the buffer to the group's PEs. A gathered PE list doubles as the
     * barrier before anyone reads a peer's header.
     */
    private SymmetricMemory allocateOnNvshmemHeap(StoreExchange group, String label, long sizeBytes, Duration timeout) {
        String name = group.groupName();
        // Agreed with every rank, one heap call at a time in this rank, within the deadline.
        NativeBuffer buffer = nvshmem.allocate(name, sizeBytes, timeout, () -> backend.allocate(sizeBytes));
        Runnable release = () -> releaseOnNvshmemHeap(buffer, name, sizeBytes, timeout);
        try {
            int myPe = NativeNvshmem.pe()[0];
            byte[] mine = ByteBuffer.allocate(12).putInt(myPe).putLong(sizeBytes).array();
            List<byte[]> all = group.allGather(label, mine, timeout).await().atMost(timeout.plusSeconds(5));
            int[] pes = new int[all.size()];
            for (int r = 0; r < pes.length; r++) {
                ByteBuffer b = ByteBuffer.wrap(all.get(r));
                pes[r] = b.getInt();
                long theirs = b.getLong();
                if (theirs != sizeBytes) {
                    throw new RendezvousException("symmetric buffer sizes differ across the ranks of group '" + name
                            + "': rank " + r + " allocated " + theirs + " bytes, rank " + group.rank() + " " + sizeBytes);
                }
            }
            buffer.importPes(group.rank(), pes);
            group.barrier(timeout).await().atMost(timeout.plusSeconds(5));
            return new SymmetricMemory(buffer, name, group.rank(), group.worldSize(), barrierTimeout, release);
        } catch (RuntimeException e) {
            try {
                release.run();
            } catch (RuntimeException freeing) {
                e.addSuppressed(freeing);
            }
            throw e;
        }
    }

    /** nvshmem_free is collective too: agreed like the allocation, else the buffer is kept (and named). */
    private void releaseOnNvshmemHeap(NativeBuffer buffer, String group, long sizeBytes, Duration timeout) {
        if (NativeCore.aborted()) {
            buffer.close();  // native code releases only its bookkeeping: the dead PE would never free
            return;
        }
        nvshmem.free(group, sizeBytes, timeout, buffer::close);
    }

    private static List<PeerDescriptor> gather(StoreExchange group, String label, PeerDescriptor mine, Duration timeout) {
        List<byte[]> raw = group.allGather(label, mine.encode(), timeout).await().atMost(timeout.plusSeconds(5));
        List<PeerDescriptor> peers = new ArrayList<>(raw.size());
        for (int r = 0; r < raw.size(); r++) {
            peers.add(PeerDescriptor.decode(raw.get(r), r));
        }
        return peers;
    }

    /** Every rank runs this on the same gathered list, so every rank fails with the same message. */
    static void checkAgreement(String group, List<PeerDescriptor> peers) {
        PeerDescriptor first = peers.get(0);
        boolean sizesDiffer = peers.stream().anyMatch(p -> p.sizeBytes() != first.sizeBytes());
        if (sizesDiffer) {
            StringBuilder sizes = new StringBuilder();
            for (int r = 0; r < peers.size(); r++) {
                sizes.append(r == 0 ? "" : ", ").append("rank ").append(r).append(": ")
                        .append(peers.get(r).sizeBytes()).append(" bytes");
            }
            throw new RendezvousException("symmetric buffer sizes differ across the ranks of group '" + group
                    + "' (" + sizes + "); every rank must allocate the same size");
        }
        for (int r = 0; r < peers.size(); r++) {
            PeerDescriptor p = peers.get(r);
            if (!p.backend().equals(first.backend())) {
                throw new RendezvousException("rank " + r + " of group '" + group + "' uses backend " + p.backend()
                        + " but rank 0 uses " + first.backend() + "; set the same SYMMEM_BACKEND on every rank");
            }
            if (!p.hostId().equals(first.hostId())) {
                throw new RendezvousException("rank " + r + " of group '" + group + "' runs on " + p.hostId()
                        + " but rank 0 on " + first.hostId() + "; symmetric buffers need every rank on one machine");
            }
        }
    }
}
