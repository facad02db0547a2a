package io.symmem.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The values the native library uses, through the Java bindings (this JVM's environment sets none of them). */
class NativeTunablesTest {
    @Test
    void anUnsetTunableReadsAsItsDefaultAndAComputedOneAsMinusOne() {
        assertThat(System.getenv("SYMMEM_CUDA_PUSH_SCRATCH_BYTES")).as("precondition: unset here").isNull();
        assertThat(NativeTunables.value("SYMMEM_CUDA_PUSH_SCRATCH_BYTES")).isEqualTo(4L << 20);
        assertThat(NativeTunables.value("SYMMEM_CUDA_PUSH_MAX_BYTES")).isEqualTo(-1L);
    }

    @Test
    void anUnknownNameIsRefusedNamingIt() {
        assertThatThrownBy(() -> NativeTunables.value("SYMMEM_CUDA_NO_SUCH_THING"))
                .isInstanceOf(NativeException.InvalidArgument.class).hasMessageContaining("SYMMEM_CUDA_NO_SUCH_THING");
    }
}
