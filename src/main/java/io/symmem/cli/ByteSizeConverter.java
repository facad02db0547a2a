package io.symmem.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** "4096", "4KiB", "1MiB", "2GiB" to bytes. */
public class ByteSizeConverter implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (v.endsWith("kib") || v.endsWith("k")) {
            unit = 1L << 10;
        } else if (v.endsWith("mib") || v.endsWith("m")) {
            unit = 1L << 20;
        } else if (v.endsWith("gib") || v.endsWith("g")) {
            unit = 1L << 30;
        }
        String digits = v.replaceAll("[a-z]+$", "");
        try {
            long n = Long.parseLong(digits) * unit;
            if (n <= 0) {
                throw new TypeConversionException("size must be positive: '" + value + "'");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new TypeConversionException("not a size: '" + value + "' (use e.g. 4096, 64KiB, 1MiB)");
        }
    }

    static String format(long bytes) {
        if (bytes >= (1L << 20) && bytes % (1L << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1024 && bytes % 1024 == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
