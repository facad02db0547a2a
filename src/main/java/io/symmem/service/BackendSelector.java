package io.symmem.service;

import io.symmem.config.Backend;
import io.symmem.nativ.NativeBackend;

/** Opens the native backend SYMMEM_BACKEND asks for. */
final class BackendSelector {
    private BackendSelector() {
    }

    static NativeBackend open(Backend requested, int localRank) {
        return switch (requested) {
            // auto stays on host until the CUDA backend can hold symmetric buffers (the CUDA issue);
            // then it becomes "cuda when every rank has a GPU".
            case AUTO, HOST -> new NativeBackend("host", -1);
            case CUDA -> new NativeBackend("cuda", localRank);
        };
    }
}
