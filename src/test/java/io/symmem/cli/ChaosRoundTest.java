package io.symmem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How the chaos report decides that a survivor named the dead rank, and its verdict. */
class ChaosRoundTest {
    private static ChaosRound.Survivor survivor(String detectedRanks, String failure, Integer exit) {
        return new ChaosRound.Survivor(0, detectedRanks == null ? null : 12L, detectedRanks, "reason", exit,
                exit == null ? null : 300L, failure);
    }

    @Test
    void aRankIsNamedByTheLivenessReportOrByTheError() {
        assertThat(survivor("[2]", null, 1).named(2)).isTrue();
        assertThat(survivor("[0, 2]", null, 1).named(2)).isTrue();
        assertThat(survivor("[12]", null, 1).named(2)).as("12 is not 2").isFalse();
        assertThat(survivor(null, "barrier(channel 1): aborted: rank 2 is gone (…)", 1).named(2)).isTrue();
        assertThat(survivor(null, "all_gather: aborted: ranks [1, 2] are gone", 1).named(2)).isTrue();
        assertThat(survivor(null, "rank 12 is gone", 1).named(2)).isFalse();
        assertThat(survivor(null, "timed out after 30000 ms", 1).named(2)).isFalse();
    }

    @Test
    void theVerdictNeedsEverySurvivorToDetectNameAndExitNonZero() {
        ChaosRound.Result good = new ChaosRound.Result(ChaosPhase.IDLE, 2, 500, List.of(survivor("[2]", "rank 2 is gone", 1)), null);
        ChaosRound.Result hung = new ChaosRound.Result(ChaosPhase.IDLE, 2, 500, List.of(survivor("[2]", null, null)), null);
        ChaosRound.Result zero = new ChaosRound.Result(ChaosPhase.IDLE, 2, 500, List.of(survivor("[2]", null, 0)), null);
        ChaosRound.Result unseen = new ChaosRound.Result(ChaosPhase.IDLE, 2, 500, List.of(survivor(null, "timed out", 1)), null);
        assertThat(new ChaosReport(List.of(good)).allGood()).isTrue();
        assertThat(new ChaosReport(List.of(good, hung)).allGood()).isFalse();
        assertThat(new ChaosReport(List.of(good, zero)).allGood()).isFalse();
        assertThat(new ChaosReport(List.of(unseen)).allGood()).isFalse();
        assertThat(ChaosReport.line(1, hung)).contains("HUNG");
    }

    @Test
    void phasesParseByNameAndRefuseOthersNamingTheChoices() {
        assertThat(ChaosPhase.parse(" Collective ")).isEqualTo(ChaosPhase.COLLECTIVE);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ChaosPhase.parse("nap"))
                .hasMessageContaining("unknown phase 'nap'").hasMessageContaining("rendezvous, collective, barrier, store, idle");
    }
}
