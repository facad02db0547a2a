package io.symmem.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.symmem.collective.DType;
import io.symmem.collective.ReduceOp;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every check that happens before a native call: no NCCL or GPU needed. */
class NcclArgumentsTest {
    private static final byte[] UID = new byte[128];
    private static final Duration D = Duration.ofSeconds(1);

    @Test
    void initRankRefusesBadArgumentsNamingThem() {
        assertThatThrownBy(() -> NcclCommunicator.initRank(0, UID, 0, 0, D))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("nranks must be >= 1, got 0");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, 2, 0, D))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("rank must be in 0..1, got 2");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, -1, 0, D))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("rank must be in 0..1, got -1");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, null, 0, 0, D)).hasMessageContaining("uniqueId must not be null");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, new byte[127], 0, 0, D))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("uniqueId must be 128 bytes, got 127");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, 0, -1, D))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("device must be >= 0, got -1");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, 0, 0, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadline must be between 1 ms and 24 days");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, 0, 0, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("deadline must not be null");
        assertThatThrownBy(() -> NcclCommunicator.initRank(2, UID, 0, 0, D, Duration.ofDays(30)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("collectiveTimeout must be between");
        assertThatThrownBy(() -> NcclCommunicator.create(null, 0, D)).hasMessageContaining("group must not be null");
    }

    @Test
    void bufferBoundsAreCheckedWithoutOverflow() {
        NcclCommunicator.checkBytes("allReduce", "send", 28, 0, 7, NcclDataType.FLOAT32, 1);  // exactly fits
        NcclCommunicator.checkBytes("allReduce", "send", 0, 0, 0, NcclDataType.FLOAT32, 1);   // empty is fine
        assertThatThrownBy(() -> NcclCommunicator.checkBytes("allReduce", "send", 28, 4, 7, NcclDataType.FLOAT32, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("allReduce: send is too small: 7 fp32 elements at offset 4 need 32 bytes, it has 28");
        assertThatThrownBy(() -> NcclCommunicator.checkBytes("allGather", "recv", 56, 0, 7, NcclDataType.INT64, 2))
                .hasMessage("allGather: recv is too small: 2 x 7 int64 elements at offset 0 need 112 bytes, it has 56");
        assertThatThrownBy(() -> NcclCommunicator.checkBytes("reduceScatter", "send", Long.MAX_VALUE, 0, Long.MAX_VALUE / 2,
                NcclDataType.FLOAT64, 4)).hasMessageContaining("overflow a 64-bit byte count");
    }

    @Test
    void ncclEnumsCarryNcclsValues() {
        // ncclDataType_t / ncclRedOp_t of nccl.h (2.28)
        assertThat(NcclDataType.INT8.code()).isEqualTo(0);
        assertThat(NcclDataType.UINT8.code()).isEqualTo(1);
        assertThat(NcclDataType.INT32.code()).isEqualTo(2);
        assertThat(NcclDataType.INT64.code()).isEqualTo(4);
        assertThat(NcclDataType.FLOAT16.code()).isEqualTo(6);
        assertThat(NcclDataType.FLOAT32.code()).isEqualTo(7);
        assertThat(NcclDataType.FLOAT64.code()).isEqualTo(8);
        assertThat(NcclDataType.BFLOAT16.code()).isEqualTo(9);
        assertThat(NcclRedOp.SUM.code()).isZero();
        assertThat(NcclRedOp.PROD.code()).isEqualTo(1);
        assertThat(NcclRedOp.MAX.code()).isEqualTo(2);
        assertThat(NcclRedOp.MIN.code()).isEqualTo(3);
        assertThat(NcclRedOp.AVG.code()).isEqualTo(4);
        for (DType d : DType.values()) {
            assertThat(NcclDataType.of(d).bytes()).isEqualTo(d.bytes());
            assertThat(NcclDataType.of(d).shortName()).isEqualTo(d.shortName());
        }
        for (ReduceOp op : ReduceOp.values()) {
            assertThat(NcclRedOp.of(op).name()).isEqualTo(op.name());
        }
        assertThat(NcclDataType.parse(" BF16 ")).isEqualTo(NcclDataType.BFLOAT16);
        assertThat(NcclDataType.parse("float64")).isEqualTo(NcclDataType.FLOAT64);
        assertThatThrownBy(() -> NcclDataType.parse("fp8")).hasMessageContaining("use fp64, fp32");
    }

    @Test
    void versionComparesByMajorAndMinor() {
        NcclVersion v = new NcclVersion(2, 28, 9, "", 22809);
        assertThat(v.atLeast(2, 27)).isTrue();
        assertThat(v.atLeast(2, 28)).isTrue();
        assertThat(v.atLeast(2, 29)).isFalse();
        assertThat(v.atLeast(3, 0)).isFalse();
        assertThat(new NcclVersion(3, 0, 0, "", 30000).atLeast(2, 99)).isTrue();
        assertThat(v).hasToString("2.28.9");
    }

    @Test
    void bufferOffsetsAreChecked() {
        assertThatThrownBy(() -> NcclBuffer.of(null)).hasMessageContaining("memory must not be null");
    }
}
