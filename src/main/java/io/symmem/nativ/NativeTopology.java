package io.symmem.nativ;

import java.util.ArrayList;
import java.util.List;

/**
 * The local GPUs as libsymmem sees them (symmem_cuda_topology): per device its name, UUID, VMM
 * support and multicast state; per pair peer access, P2P performance rank (NVLink ranks first) and
 * native atomics. Without CUDA (driver, device or build): no devices.
 */
public record NativeTopology(int deviceCount, List<Device> devices, int[][] canAccessPeer, int[][] performanceRank,
        int[][] nativeAtomics) {

    /** One GPU. multicast: "unsupported", "supported" (never used by symmem) or "disabled". */
    public record Device(int index, String name, String uuid, boolean vmmSupported, String multicast) {
    }

    public static NativeTopology query() {
        SymmemLibrary.ensureLoaded();
        try (SymmemLibrary.Topology t = new SymmemLibrary.Topology()) {
            Status.check(SymmemLibrary.symmem_cuda_topology(t), "symmem_cuda_topology");
            int n = Math.min(t.deviceCount(), SymmemLibrary.SYMMEM_TOPOLOGY_MAX_DEVICES);
            List<Device> devices = new ArrayList<>(n);
            int[][] access = new int[n][n];
            int[][] perf = new int[n][n];
            int[][] atomics = new int[n][n];
            for (int i = 0; i < n; i++) {
                byte[] uuid = new byte[16];
                for (int b = 0; b < 16; b++) {
                    uuid[b] = t.uuid(i, b);
                }
                devices.add(new Device(i, t.name(i).getString(), uuidText(uuid), t.vmmSupported(i) != 0,
                        multicastName(t.multicast(i))));
                for (int j = 0; j < n; j++) {
                    access[i][j] = t.canAccessPeer(i, j);
                    perf[i][j] = t.performanceRank(i, j);
                    atomics[i][j] = t.nativeAtomics(i, j);
                }
            }
            return new NativeTopology(n, List.copyOf(devices), access, perf, atomics);
        }
    }

    static String multicastName(int state) {
        return switch (state) {
            case SymmemLibrary.SYMMEM_MULTICAST_SUPPORTED -> "supported";
            case SymmemLibrary.SYMMEM_MULTICAST_DISABLED -> "disabled";
            default -> "unsupported";
        };
    }

    /** "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it. */
    public static String uuidText(byte[] u) {
        StringBuilder s = new StringBuilder("GPU-");
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                s.append('-');
            }
            s.append(String.format("%02x", u[i] & 0xff));
        }
        return s.toString();
    }
}
