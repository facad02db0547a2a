package io.symmem.cli.common;

import io.symmem.collective.ReduceOp;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** A reduction option: sum, avg, max or min, any case. */
public class ReduceOpConverter extends ParsingConverter<ReduceOp> {
    public ReduceOpConverter() {
        super(ReduceOpConverter::parse);
    }

    static ReduceOp parse(String text) {
        for (ReduceOp op : ReduceOp.values()) {
            if (op.name().equalsIgnoreCase(text.trim())) {
                return op;
            }
        }
        throw new IllegalArgumentException("reduction '" + text + "' is unknown; use "
                + Arrays.stream(ReduceOp.values()).map(op -> op.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", ")));
    }
}
