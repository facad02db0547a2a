package io.symmem.nccl;

import io.symmem.nativ.DeviceMemory;
import java.util.Objects;

/**
 * Where a collective reads or writes: a memory owner and a byte offset into it; the element count is
 * the collective's. The owner, not a raw address, travels so that its size and liveness are checked
 * before any native call.
 */
public record NcclBuffer(DeviceMemory memory, long offsetBytes) {
    public NcclBuffer {
        Objects.requireNonNull(memory, "memory must not be null");
        if (offsetBytes < 0) {
            throw new IllegalArgumentException("offsetBytes must be >= 0, got " + offsetBytes);
        }
    }

    public static NcclBuffer of(DeviceMemory memory) {
        return new NcclBuffer(memory, 0);
    }

    public static NcclBuffer of(DeviceMemory memory, long offsetBytes) {
        return new NcclBuffer(memory, offsetBytes);
    }
}
