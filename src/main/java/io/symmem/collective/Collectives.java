package io.symmem.collective;

import io.symmem.memory.SymmetricMemory;
import io.symmem.nativ.LocalBuffer;
import java.time.Duration;
import java.util.Objects;

/** Argument checks shared by the collectives: each message names the argument. */
final class Collectives {
    private Collectives() {
    }

    static void require(Object value, String name) {
        Objects.requireNonNull(value, name + " must not be null");
    }

    static void checkTimeout(Duration timeout) {
        require(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    static void checkRoot(String what, SymmetricMemory memory, int root) {
        if (root < 0 || root >= memory.worldSize()) {
            throw new IllegalArgumentException(what + ": root " + root + " is out of range 0.." + (memory.worldSize() - 1)
                    + " (world " + memory.worldSize() + " of group '" + memory.group() + "')");
        }
    }

    /** count elements of dtype, times factor, must fit in the symmetric buffer. */
    static void checkCount(String what, SymmetricMemory memory, DType dtype, long count, long factor) {
        if (count < 0) {
            throw new IllegalArgumentException(what + ": count must be >= 0, got " + count);
        }
        long need = Math.multiplyHigh(count, dtype.bytes() * factor) != 0 ? Long.MAX_VALUE : count * dtype.bytes() * factor;
        if (need > memory.sizeBytes() || need < 0) {
            throw new IllegalArgumentException(what + ": count " + count + (factor == 1 ? "" : " x world " + factor) + " "
                    + dtype.shortName() + " elements need " + need + " bytes, but the symmetric buffer of group '"
                    + memory.group() + "' holds " + memory.sizeBytes());
        }
    }

    static void checkOut(String what, SymmetricMemory memory, LocalBuffer out, long needBytes, DType dtype, long count) {
        if (out == null) {
            return;
        }
        if (out.size() < needBytes) {
            throw new IllegalArgumentException(what + ": out holds " + out.size() + " bytes, but " + count + " "
                    + dtype.shortName() + " elements" + (needBytes == count * dtype.bytes() ? "" : " x world")
                    + " need " + needBytes);
        }
        if (out.backend() != memory.nativeBuffer().backend()) {
            throw new IllegalArgumentException(what + ": out belongs to another backend than the symmetric buffer of group '"
                    + memory.group() + "'; allocate it with memory.allocateLocal(bytes)");
        }
    }
}
