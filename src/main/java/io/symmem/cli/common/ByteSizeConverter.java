package io.symmem.cli.common;

import io.symmem.config.ByteSize;

/**
 * A size option ("4096", "64KiB", "1MB"; see {@link ByteSize}) of at least one byte. The error names
 * the value and the accepted forms; {@link OptionErrorHandler} puts the option's name in front.
 */
public class ByteSizeConverter extends ParsingConverter<Long> {
    public ByteSizeConverter() {
        super(value -> ByteSize.parse(value, 1, Long.MAX_VALUE));
    }

    /** The same rules for an option held in an int (e.g. a store value, whose length field is 32 bits). */
    public static class ToInt extends ParsingConverter<Integer> {
        public ToInt() {
            super(value -> (int) ByteSize.parse(value, 1, Integer.MAX_VALUE));
        }
    }
}
