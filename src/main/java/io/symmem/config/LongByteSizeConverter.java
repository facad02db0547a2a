package io.symmem.config;

import org.eclipse.microprofile.config.spi.Converter;

/** Reads a size variable held in a long (SYMMEM_NVSHMEM_HEAP_SIZE) with {@link ByteSize}'s rules. */
public class LongByteSizeConverter implements Converter<Long> {
    @Override
    public Long convert(String value) {
        if (value == null || value.isBlank()) {
            return null; // unset
        }
        try {
            return ByteSize.parse(value);
        } catch (ByteSize.InvalidSizeException e) {
            // Only the reason: the loader puts the variable, its value and what it allows in front.
            throw new IllegalArgumentException(e.reason(), e);
        }
    }
}
