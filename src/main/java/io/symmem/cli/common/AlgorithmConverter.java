package io.symmem.cli.common;

import io.symmem.collective.Algorithm;

/** An all-reduce algorithm option: auto, one-shot, two-shot or two-shot-ce (any case, '_' for '-'), see {@link Algorithm#parse}. */
public class AlgorithmConverter extends ParsingConverter<Algorithm> {
    public AlgorithmConverter() {
        super(Algorithm::parse);
    }
}
