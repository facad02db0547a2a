package io.symmem.cli.common;

import io.symmem.collective.DType;

/** An element type option: fp32, bf16 or fp16 (also float32, bfloat16, float16; any case), see {@link DType#parse}. */
public class DTypeConverter extends ParsingConverter<DType> {
    public DTypeConverter() {
        super(DType::parse);
    }
}
