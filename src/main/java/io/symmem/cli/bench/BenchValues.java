package io.symmem.cli.bench;

import java.nio.charset.StandardCharsets;

/** Deterministic test values: the bytes written under a key can be recomputed from the key alone. */
final class BenchValues {
    private BenchValues() {
    }

    static byte[] of(String key, int size) {
        int h = 0x9E3779B9;
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ b) * 0x01000193;
        }
        byte[] v = new byte[size];
        for (int i = 0; i < size; i++) {
            h ^= h << 13;
            h ^= h >>> 17;
            h ^= h << 5;
            v[i] = (byte) h;
        }
        return v;
    }
}
