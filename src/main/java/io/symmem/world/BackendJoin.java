package io.symmem.world;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.symmem.config.Backend;
import io.symmem.config.SymmemConfig;
import io.symmem.memory.HostIdentity;
import io.symmem.nativ.NativeBackend;
import io.symmem.nativ.NativeCore;
import io.symmem.nccl.Nccl;
import io.symmem.nccl.NcclGroups;
import io.symmem.nccl.NcclVersion;
import io.symmem.store.Store;
import io.symmem.store.StoreExchange;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The backend SYMMEM_BACKEND asks for, opened through the world rendezvous: every rank publishes what it
 * has (its {@link PeerInfo}: device, host, HTTP port) and all take the same decision from the gathered
 * list. NVSHMEM and NCCL are loaded before the rendezvous (a rank without them stops, saying where it
 * looked) and joined through the store after it.
 */
final class BackendJoin {
    private static final Logger LOG = Logger.getLogger(BackendJoin.class);

    /** What the rendezvous opened: the backend, every rank's entry, and NVSHMEM or NCCL where asked for (else null). */
    record Joined(NativeBackend backend, List<PeerInfo> peers, NvshmemStartup nvshmem, NcclGroups ncclGroups) {
    }

    private final SymmemConfig config;
    private final StoreExchange world;
    private final Store runStore;
    private final ObjectMapper json;
    private final int httpPort;
    private NativeBackend backend;
    private NvshmemStartup nvshmem;
    private NcclGroups ncclGroups;

    BackendJoin(SymmemConfig config, StoreExchange world, Store runStore, ObjectMapper json, int httpPort) {
        this.config = config;
        this.world = world;
        this.runStore = runStore;
        this.json = json;
        this.httpPort = httpPort;
    }

    /** Opens the backend and performs the world rendezvous (collective: every rank of the world calls it). */
    Joined join(Duration timeout) throws IOException {
        List<PeerInfo> peers;
        if (config.backend() == Backend.AUTO) {
            peers = joinAuto(timeout);
        } else if (config.backend() == Backend.NVSHMEM) {
            peers = joinNvshmem(timeout);
        } else if (config.backend() == Backend.NCCL) {
            peers = joinNccl(timeout);
        } else {
            backend = BackendSelector.openExplicit(config.backend(), config.effectiveLocalRank(),
                    config.allowOverlappingDevices());
            peers = rendezvous(mine(backend.name(), backend.device(), backend.deviceName(), NativeCore.cudaDeviceCount()),
                    timeout);
        }
        return new Joined(backend, peers, nvshmem, ncclGroups);
    }

    /**
     * SYMMEM_BACKEND=nvshmem: NVSHMEM is loaded (or the rank stops, listing where it looked) before the
     * world rendezvous, then joined by unique id through the store, then the backend opened on it.
     */
    private List<PeerInfo> joinNvshmem(Duration timeout) throws IOException {
        int device = BackendSelector.explicitDevice(Backend.NVSHMEM, config.effectiveLocalRank(),
                config.allowOverlappingDevices());
        NvshmemStartup startup = NvshmemStartup.load(System.getenv());
        List<PeerInfo> gathered = rendezvous(mine(Backend.NVSHMEM.id(), device, BackendSelector.deviceName(device),
                NativeCore.cudaDeviceCount()), timeout);
        startup.join(name -> new StoreExchange(runStore, name, config.rank(), config.worldSize()), config.rank(),
                config.worldSize(), device, NvshmemStartup.sharedGpus(gathered), timeout);
        nvshmem = startup;
        backend = new NativeBackend("nvshmem", device);
        return gathered;
    }

    /**
     * SYMMEM_BACKEND=nccl: NCCL is loaded and checked for symmetric windows (2.27+) before the world
     * rendezvous (a rank without it stops, saying where it looked), then the world's communicator is
     * made through the store and the backend opened; every buffer becomes a window of its group's
     * communicator.
     */
    private List<PeerInfo> joinNccl(Duration timeout) throws IOException {
        int device = BackendSelector.ncclDevice(config.effectiveLocalRank(), config.allowOverlappingDevices());
        NcclVersion version;
        try {
            version = Nccl.load();
        } catch (RuntimeException e) {
            throw new IllegalStateException("SYMMEM_BACKEND=nccl: " + e.getMessage(), e);
        }
        if (!version.atLeast(2, 27)) {
            throw new IllegalStateException("SYMMEM_BACKEND=nccl: NCCL " + version + " from " + Nccl.libraryPath()
                    + " has no symmetric windows (ncclCommWindowRegister needs 2.27 or later); set SYMMEM_NCCL_LIBRARY "
                    + "to a newer libnccl.so.2");
        }
        List<PeerInfo> gathered = rendezvous(mine(Backend.NCCL.id(), device, BackendSelector.deviceName(device),
                NativeCore.cudaDeviceCount()), timeout);
        NcclGroups groups = new NcclGroups(device, config.timeout().collective());
        groups.communicator(world, timeout);
        ncclGroups = groups;
        backend = new NativeBackend("nccl", device);
        LOG.infof("NCCL %s from %s (%s): world communicator ready on device %d", version, Nccl.libraryPath(),
                Nccl.runtimeConnect(), device);
        return gathered;
    }

    private PeerInfo mine(String backendName, int device, String deviceName, int cudaDevices) {
        return new PeerInfo(config.rank(), config.effectiveLocalRank(), HostIdentity.id(),
                ProcessHandle.current().pid(), httpPort, backendName, device, deviceName, cudaDevices);
    }

    /**
     * SYMMEM_BACKEND=auto: every rank publishes the CUDA device it would use (or -1); after the
     * gather all ranks take the same decision: cuda if every rank has one, else host, logged with why.
     */
    private List<PeerInfo> joinAuto(Duration timeout) throws IOException {
        BackendSelector.CudaCandidate candidate = BackendSelector.candidate(config.effectiveLocalRank(),
                config.allowOverlappingDevices());
        List<PeerInfo> gathered = rendezvous(mine(Backend.AUTO.id(), candidate.device(), candidate.deviceName(),
                candidate.deviceCount()), timeout);
        String reason = BackendSelector.autoFallbackReason(gathered);
        List<PeerInfo> decided = new ArrayList<>(gathered.size());
        if (reason == null) {
            backend = new NativeBackend("cuda", candidate.device());
            LOG.infof("SYMMEM_BACKEND=auto: every rank has a CUDA device, using cuda (device %d, %s)", backend.device(),
                    backend.deviceName());
            for (PeerInfo p : gathered) {
                decided.add(p.withBackend("cuda", p.device(), p.deviceName()));
            }
        } else {
            backend = new NativeBackend("host", -1);
            if (candidate.deviceCount() > 0) {
                LOG.warnf("SYMMEM_BACKEND=auto: every rank falls back to the host backend: %s", reason);
            } else {
                LOG.infof("SYMMEM_BACKEND=auto: using the host backend (%s)", reason);
            }
            for (PeerInfo p : gathered) {
                decided.add(p.withBackend("host", -1, "cpu"));
            }
        }
        return List.copyOf(decided);
    }

    private List<PeerInfo> rendezvous(PeerInfo mine, Duration timeout) throws IOException {
        List<byte[]> all = world.allGather(json.writeValueAsBytes(mine), timeout).await().atMost(timeout.plusSeconds(5));
        List<PeerInfo> result = new ArrayList<>(all.size());
        for (byte[] bytes : all) {
            result.add(json.readValue(bytes, PeerInfo.class));
        }
        return List.copyOf(result);
    }
}
