package io.symmem.cli.common;

import io.symmem.collective.Algorithm;

/**
 * An all-reduce algorithm option of a command that reduces out of place (the demo): auto, one-shot or
 * two-shot; two-shot-ce, which reduces in place only, is refused here with where it runs instead.
 */
public class OutOfPlaceAlgorithmConverter extends ParsingConverter<Algorithm> {
    public OutOfPlaceAlgorithmConverter() {
        super(OutOfPlaceAlgorithmConverter::parse);
    }

    private static Algorithm parse(String text) {
        Algorithm a = Algorithm.parse(text);
        if (a == Algorithm.TWO_SHOT_CE) {
            throw new IllegalArgumentException("two-shot-ce reduces in place only, and this command reduces out of place; "
                    + "use auto, one-shot or two-shot (bench allreduce --in-place --algos two-shot-ce runs it)");
        }
        return a;
    }
}
