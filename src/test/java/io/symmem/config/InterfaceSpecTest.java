package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** NCCL-style interface lists: prefixes, exact names, exclusion. */
class InterfaceSpecTest {
    private static final List<String> HOST = List.of("lo", "eth0", "eth1", "ib0", "docker0");

    private static List<String> selected(String spec) {
        return InterfaceSpec.parse(spec).selected(HOST);
    }

    @Test
    void namesArePrefixesUnlessMarkedExact() {
        assertThat(selected("eth")).containsExactly("eth0", "eth1");
        assertThat(selected("eth,ib")).containsExactly("eth0", "eth1", "ib0");
        assertThat(selected("=eth")).isEmpty();
        assertThat(selected("=eth1,lo")).containsExactly("lo", "eth1");
    }

    @Test
    void aCaretExcludesTheNamedOnes() {
        assertThat(selected("^docker,lo")).containsExactly("eth0", "eth1", "ib0");
        assertThat(selected("^=eth0")).containsExactly("lo", "eth1", "ib0", "docker0");
        assertThat(selected("^l,e,i,d")).isEmpty();
    }

    @Test
    void theMarkersAreReadOnceInTheirOrder() {
        InterfaceSpec spec = InterfaceSpec.parse("^=a,b");
        assertThat(spec.exclude()).isTrue();
        assertThat(spec.exact()).isTrue();
        assertThat(spec.names()).containsExactly("a", "b");
        assertThat(InterfaceSpec.parse("=^a").names()).containsExactly("^a");
    }
}
