package io.symmem.service.groups;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.symmem.nativ.NativeException;
import io.symmem.nativ.NativeNccl;
import io.symmem.nativ.NativeNvshmem;
import io.symmem.nccl.Nccl;
import io.symmem.service.RankRuntime;
import io.symmem.service.http.ApiProblem;
import io.symmem.store.DurationText;
import io.symmem.store.Store;
import io.symmem.store.StoreTimeoutException;
import io.symmem.world.NvshmemStartup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The ids that bootstrap NCCL communicators and NVSHMEM worlds, one of each per group, the same bytes
 * on every rank: the sidecar of the group's rank 0 makes it (NCCL and NVSHMEM then run their
 * bootstrap root in that sidecar's process, which lives as long as the pod) and sets it in the store;
 * the other ranks' sidecars read it from there. A process in the pod passes it to
 * {@code torch.cuda.nccl.init_rank} or {@code nvshmemx_init_attr} like an id it made itself.
 */
@ApplicationScoped
public class BootstrapIds {

    /** Which library's id. */
    public enum Kind {
        NCCL("nccl", "NCCL", NativeNccl.UNIQUE_ID_BYTES), NVSHMEM("nvshmem", "NVSHMEM", NativeNvshmem.UNIQUE_ID_BYTES);

        private final String word;
        private final String library;
        /** An id has exactly this many bytes; a value of another length in its key is rank 0's error. */
        private final int bytes;

        Kind(String word, String library, int bytes) {
            this.word = word;
            this.library = library;
            this.bytes = bytes;
        }

        public String word() {
            return word;
        }
    }

    @Inject
    RankRuntime runtime;

    /** Ids this sidecar made (as some group's rank 0): made once per group, then served from here. */
    private final Map<String, Uni<byte[]>> made = new ConcurrentHashMap<>();
    /** This sidecar loaded NVSHMEM for ids (its environment is set once, before NVSHMEM reads it). */
    private boolean nvshmemLoaded;

    /** The store key of a group's id, beside the group's exchange keys. */
    static String key(String group, Kind kind) {
        return "symmem/ex/" + group + "/bootstrap/" + kind.word() + "-unique-id";
    }

    /** The group's id: made here on its rank 0, read from the store elsewhere (waiting up to {@code timeout}). */
    public Uni<byte[]> id(SidecarGroup group, Kind kind, Duration timeout) {
        Store store = runtime.runStore();
        if (store == null) {
            throw new ApiProblem(503, "rank " + runtime.config().rank() + " has not reached the store yet (state " + runtime.state() + ")");
        }
        String key = key(group.name(), kind);
        if (group.rank() == 0) {
            return made.computeIfAbsent(key, k -> Uni.createFrom().item(maker(kind))
                    .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                    .call(id -> store.set(key, id))
                    .onFailure(ApiProblem.class).call(e -> store.set(key, e.getMessage().getBytes(StandardCharsets.UTF_8)))
                    .onFailure().invoke(e -> made.remove(key))
                    .memoize().indefinitely());
        }
        int root = group.worldRanks()[0];
        return store.get(key, timeout).onFailure(StoreTimeoutException.class).transform(e -> new ApiProblem(504,
                "group '" + group.name() + "': no " + kind.library + " unique id from its rank 0 (world rank " + root
                        + ") within " + DurationText.of(timeout) + "; its sidecar makes it when asked for it", List.of(root), e))
                .map(value -> {
                    if (value.length != kind.bytes) {
                        // Rank 0 could not make it, and left its reason instead (asking rank 0 again retries).
                        throw new ApiProblem(503, "group '" + group.name() + "': rank 0 (world rank " + root + ") could not make the "
                                + kind.library + " unique id: " + new String(value, StandardCharsets.UTF_8), List.of(root), null);
                    }
                    return value;
                });
    }

    private Supplier<byte[]> maker(Kind kind) {
        return () -> {
            try {
                return kind == Kind.NCCL ? Nccl.uniqueId() : nvshmemId();
            } catch (NativeException | IllegalStateException e) {
                throw new ApiProblem(503, kind.library + " cannot make a unique id on rank " + runtime.config().rank()
                        + " (its library is missing or cannot load here): " + e.getMessage(), null, e);
            }
        };
    }

    /** NVSHMEM's id; the library is loaded first unless the rank runs the nvshmem backend (then it is). */
    private byte[] nvshmemId() {
        if (runtime.nvshmem() == null) {
            synchronized (this) {
                if (!nvshmemLoaded) {
                    NvshmemStartup.load(System.getenv(), "an NVSHMEM unique id");
                    nvshmemLoaded = true;
                }
            }
        }
        return NativeNvshmem.uniqueId();
    }
}
