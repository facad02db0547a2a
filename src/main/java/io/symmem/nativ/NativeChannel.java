package io.symmem.nativ;

import java.time.Duration;
import java.util.List;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.PointerPointer;

/**
 * A Unix-domain datagram socket that moves file descriptors between the processes of one machine
 * (SCM_RIGHTS), like PyTorch's IpcChannel. Bound in the abstract namespace under {@link #name()}.
 */
public final class NativeChannel implements AutoCloseable {
    private final String name;
    private SymmemLibrary.ChannelHandle handle = new SymmemLibrary.ChannelHandle();

    public NativeChannel(String name) {
        this.name = name;
        Status.check(SymmemLibrary.symmem_channel_open(name, handle), "symmem_channel_open");
    }

    public String name() {
        return name;
    }

    /** Sends every peer our fd and returns every rank's fd by rank (the caller owns them all). */
    public int[] allGatherFds(List<String> peerNames, int rank, int tag, int fd, Duration timeout) {
        int world = peerNames.size();
        try (PointerPointer<?> names = new PointerPointer<>(peerNames.toArray(new String[0]));
                IntPointer out = new IntPointer(world)) {
            Status.check(SymmemLibrary.symmem_channel_all_gather_fds(open(), names, rank, world, tag, fd, out,
                    Status.millis(timeout)), "symmem_channel_all_gather_fds");
            int[] fds = new int[world];
            out.get(fds);
            return fds;
        }
    }

    /** Rank {@code root}'s fd, delivered to every rank (the caller owns the returned fd). */
    public int broadcastFd(List<String> peerNames, int rank, int root, int tag, int fd, Duration timeout) {
        try (PointerPointer<?> names = new PointerPointer<>(peerNames.toArray(new String[0]));
                IntPointer out = new IntPointer(1)) {
            Status.check(SymmemLibrary.symmem_channel_broadcast_fds(open(), names, rank, peerNames.size(), root, tag,
                    fd, out, Status.millis(timeout)), "symmem_channel_broadcast_fds");
            return out.get();
        }
    }

    private SymmemLibrary.ChannelHandle open() {
        if (handle == null) {
            throw new IllegalStateException("channel " + name + " is closed");
        }
        return handle;
    }

    @Override
    public synchronized void close() {
        if (handle != null) {
            SymmemLibrary.symmem_channel_close(handle);
            handle = null;
        }
    }
}
