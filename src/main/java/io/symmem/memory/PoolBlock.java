package io.symmem.memory;

/**
 * A range the pool's sub-allocator manages: {@code size} bytes at {@code offset} of segment
 * {@code segment}. Live blocks, free ranges and blocks waiting for their streams are all ranges of
 * this kind; together they tile every segment exactly.
 */
public record PoolBlock(int segment, long offset, long size) {
    long end() {
        return offset + size;
    }
}
