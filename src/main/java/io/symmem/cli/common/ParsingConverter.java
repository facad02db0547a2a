package io.symmem.cli.common;

import java.util.function.Function;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * An option converter over a parser that refuses a value with an {@link IllegalArgumentException}
 * saying why and what is accepted: that reason becomes picocli's conversion error, in front of which
 * {@link OptionErrorHandler} puts the command and the option, e.g. {@code symmem demo: --dtype: dtype
 * 'fp8' is unknown; use fp32, bf16 or fp16}, exit status 2.
 */
public abstract class ParsingConverter<T> implements ITypeConverter<T> {
    private final Function<String, T> parser;

    protected ParsingConverter(Function<String, T> parser) {
        this.parser = parser;
    }

    @Override
    public final T convert(String value) {
        try {
            return parser.apply(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
