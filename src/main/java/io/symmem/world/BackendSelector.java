package io.symmem.world;

import io.symmem.config.Backend;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeTopology;
import java.util.ArrayList;
import java.util.List;

/**
 * Opens the native backend SYMMEM_BACKEND asks for. cuda: device LOCAL_RANK (or LOCAL_RANK % device
 * count with SYMMEM_ALLOW_OVERLAPPING_DEVICES). auto: decided after the world rendezvous from every
 * rank's published candidate device, so that all ranks agree: cuda if every rank has one, else host.
 */
final class BackendSelector {
    private BackendSelector() {
    }

    /** The CUDA device this rank would use under auto, or -1; and how many devices it sees. */
    record CudaCandidate(int deviceCount, int device, String deviceName) {
    }

    static CudaCandidate candidate(int localRank, boolean allowOverlapping) {
        int count = NativeCore.cudaDeviceCount();
        int device = deviceFor(localRank, count, allowOverlapping);
        return new CudaCandidate(count, device, deviceName(device));
    }

    /** The name of CUDA device {@code device} (null when there is none, or the topology cannot say). */
    static String deviceName(int device) {
        if (device < 0) {
            return null;
        }
        try {
            NativeTopology topology = NativeTopology.query();
            return device < topology.devices().size() ? topology.devices().get(device).name() : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** LOCAL_RANK's device among {@code count}, or -1 when there is none for it. */
    static int deviceFor(int localRank, int count, boolean allowOverlapping) {
        if (count <= 0) {
            return -1;
        }
        if (localRank < count) {
            return localRank;
        }
        return allowOverlapping ? localRank % count : -1;
    }

    /**
     * host or cuda as asked; nvshmem is opened after NVSHMEM is joined ({@link NvshmemStartup}), auto is
     * decided at the rendezvous (see {@link #autoFallbackReason}).
     */
    static NativeBackend openExplicit(Backend requested, int localRank, boolean allowOverlapping) {
        if (requested == Backend.HOST) {
            return new NativeBackend("host", -1);
        }
        if (requested == Backend.NVSHMEM) {
            throw new IllegalArgumentException("the nvshmem backend opens once NVSHMEM is joined (NvshmemStartup)");
        }
        if (requested == Backend.NCCL) {
            throw new IllegalArgumentException("the nccl backend opens once NCCL is loaded and its communicator made "
                    + "(WorldMember)");
        }
        if (requested != Backend.CUDA) {
            throw new IllegalArgumentException("backend " + requested + " is decided at the rendezvous");
        }
        int device = explicitDevice(requested, localRank, allowOverlapping);
        try {
            return new NativeBackend("cuda", device);
        } catch (NativeException e) {
            throw new IllegalStateException("SYMMEM_BACKEND=cuda (device " + device + "): " + e.getMessage(), e);
        }
    }

    /**
     * The GPU of LOCAL_RANK for a backend asked for by name (cuda, nvshmem): LOCAL_RANK itself, or
     * LOCAL_RANK % device count when GPUs may be shared; otherwise an error saying how to fix it.
     */
    static int explicitDevice(Backend requested, int localRank, boolean allowOverlapping) {
        int count = NativeCore.cudaDeviceCount();
        int device = localRank;
        if (count > 0 && localRank >= count) {
            if (!allowOverlapping) {
                throw new IllegalStateException("SYMMEM_BACKEND=" + requested.id() + ": LOCAL_RANK " + localRank
                        + " has no GPU of its own: this process sees " + count + " CUDA device(s) (0.." + (count - 1)
                        + "); run at most " + count + " ranks on this machine, or set SYMMEM_ALLOW_OVERLAPPING_DEVICES=1 to "
                        + "share GPUs (device LOCAL_RANK % " + count + ")");
            }
            device = localRank % count;
        }
        return device;
    }

    /**
     * The GPU of LOCAL_RANK for SYMMEM_BACKEND=nccl: its own, always. NCCL refuses two ranks of one
     * communicator on the same GPU, so SYMMEM_ALLOW_OVERLAPPING_DEVICES cannot help here; say so
     * before NCCL does.
     */
    static int ncclDevice(int localRank, boolean allowOverlapping) {
        return ncclDevice(localRank, NativeCore.cudaDeviceCount(), allowOverlapping);
    }

    static int ncclDevice(int localRank, int count, boolean allowOverlapping) {
        if (count > 0 && localRank >= count) {
            throw new IllegalStateException("SYMMEM_BACKEND=nccl: LOCAL_RANK " + localRank + " has no GPU of its own: this "
                    + "process sees " + count + " CUDA device(s) (0.." + (count - 1) + "), and NCCL refuses two ranks on one "
                    + "GPU" + (allowOverlapping ? " (SYMMEM_ALLOW_OVERLAPPING_DEVICES does not apply to nccl)" : "")
                    + "; run at most " + count + " ranks on this machine, or use SYMMEM_BACKEND=cuda");
        }
        return localRank;
    }

    /**
     * Under auto: null if every rank has a CUDA device (cuda everywhere), else why not (host
     * everywhere). Every rank computes it from the same gathered list, so all agree.
     */
    static String autoFallbackReason(List<PeerInfo> peers) {
        List<String> reasons = new ArrayList<>();
        for (PeerInfo p : peers) {
            if (p.device() >= 0) {
                continue;
            }
            reasons.add(p.cudaDeviceCount() <= 0
                    ? "rank " + p.rank() + " sees no CUDA device"
                    : "rank " + p.rank() + " has LOCAL_RANK " + p.localRank() + " but sees only " + p.cudaDeviceCount()
                            + " CUDA device(s) (SYMMEM_ALLOW_OVERLAPPING_DEVICES is off)");
        }
        return reasons.isEmpty() ? null : String.join("; ", reasons);
    }
}
