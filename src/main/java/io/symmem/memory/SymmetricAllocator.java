package io.symmem.memory;

import io.symmem.nativ.Fds;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeBuffer;
import io.symmem.nativ.NativeChannel;
import io.symmem.nativ.NativeCore;
import io.symmem.store.StoreExchange;
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

    public SymmetricAllocator(NativeBackend backend, Duration barrierTimeout) {
        this.backend = backend;
        this.barrierTimeout = barrierTimeout;
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
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("symmetric buffer size must be positive, got " + sizeBytes + " bytes");
        }
        if (group.worldSize() > NativeCore.maxWorld()) {
            throw new IllegalArgumentException("group '" + group.groupName() + "' has " + group.worldSize()
                    + " ranks; symmetric buffers support at most " + NativeCore.maxWorld());
        }
        String channelName = "symmem-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID();
        try (NativeChannel channel = new NativeChannel(channelName)) {
            PeerDescriptor mine = new PeerDescriptor(sizeBytes, HostIdentity.id(), backend.name(), channelName);
            List<PeerDescriptor> peers = gather(group, mine, timeout);
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
                return new SymmetricMemory(buffer, group.groupName(), group.rank(), group.worldSize(), barrierTimeout);
            } catch (RuntimeException e) {
                buffer.close();
                throw e;
            }
        }
    }

    private static List<PeerDescriptor> gather(StoreExchange group, PeerDescriptor mine, Duration timeout) {
        List<byte[]> raw = group.allGather(mine.encode(), timeout).await().atMost(timeout.plusSeconds(5));
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
