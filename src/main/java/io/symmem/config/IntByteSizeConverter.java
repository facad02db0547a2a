package io.symmem.config;

import org.eclipse.microprofile.config.spi.Converter;

/**
 * Reads a size variable held in an int (SYMMEM_STORE_MAX_KEY_BYTES, SYMMEM_STORE_MAX_VALUE_BYTES:
 * the wire's length fields are 32-bit) with {@link ByteSize}'s rules, so "64MiB" works and "3GiB" is
 * refused instead of wrapping. The range each variable allows is checked by the validator.
 */
public class IntByteSizeConverter implements Converter<Integer> {
    @Override
    public Integer convert(String value) {
        if (value == null || value.isBlank()) {
            return null; // unset: the mapping's default applies
        }
        try {
            return (int) ByteSize.parse(value, 0, Integer.MAX_VALUE);
        } catch (ByteSize.InvalidSizeException e) {
            // Only the reason: the loader puts the variable, its value and what it allows in front.
            throw new IllegalArgumentException(e.reason(), e);
        }
    }
}
