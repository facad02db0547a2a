package io.symmem.cli;

import io.symmem.config.ByteSize;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A size option ("4096", "64KiB", "1MB"; see {@link ByteSize}) of at least one byte. The error names
 * the value and the accepted forms; {@link OptionErrorHandler} puts the option's name in front.
 */
public class ByteSizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        try {
            return ByteSize.parse(value, 1, Long.MAX_VALUE);
        } catch (ByteSize.InvalidSizeException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    /** The same rules for an option held in an int (e.g. a store value, whose length field is 32 bits). */
    public static class ToInt implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                return (int) ByteSize.parse(value, 1, Integer.MAX_VALUE);
            } catch (ByteSize.InvalidSizeException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
