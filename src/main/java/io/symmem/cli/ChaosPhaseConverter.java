package io.symmem.cli;

import io.symmem.cli.common.ParsingConverter;

/** A chaos phase option: rendezvous, collective, barrier, store or idle, any case, see {@link ChaosPhase#parse}. */
public class ChaosPhaseConverter extends ParsingConverter<ChaosPhase> {
    public ChaosPhaseConverter() {
        super(ChaosPhase::parse);
    }
}
