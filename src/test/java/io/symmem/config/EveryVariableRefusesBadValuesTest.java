package io.symmem.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Generated from the one description of the configuration, {@link ConfigVariable}: for every
 * variable, bad values derived from its kind must each give exactly one problem, one line, that names
 * the variable and its value and says what is allowed; good values derived the same way must load.
 * A new variable is covered as soon as it is listed; a new kind fails here until it has examples.
 */
class EveryVariableRefusesBadValuesTest {

    /** Values no variable takes, whatever its kind. */
    private static final List<String> NEVER = List.of("", " ", "\t");

    static List<String> badValues(ValueKind kind) {
        List<String> bad = new ArrayList<>(NEVER);
        if (kind instanceof IntegerKind k) {
            bad.addAll(List.of("abc", "1.5", "0x10", "+1", "1e3", "\uFF11", "99999999999999999999"));
            bad.add(Long.toString(k.min() - 1));
            bad.add(Long.toString(k.max() + 1));
            if (k.readByC()) {
                bad.addAll(List.of("010", "0x10", "00"));
            }
        } else if (kind instanceof BooleanKind) {
            bad.addAll(List.of("maybe", "2", "-1", "on", "off", "y", "truee", " true", "ja"));
        } else if (kind instanceof DurationKind k) {
            bad.addAll(List.of("soon", "-1s", "0s", "0", "10 s", "5parsecs", "PT-1S"));
            bad.add(k.min().minusMillis(1).toMillis() + "ms");
            bad.add(k.max().plusMillis(1).toMillis() + "ms");
        } else if (kind instanceof SizeKind k) {
            bad.addAll(List.of("1XB", "4k", "-1", "1.5MiB", "16EiB"));
            bad.add(Long.toString(k.min() - 1));
            bad.add(Long.toString(k.max() + 1));
        } else if (kind instanceof ChoiceKind k) {
            bad.addAll(List.of("gpu", k.ids().get(0) + "x", String.join(",", k.ids()), " " + k.ids().get(0)));
        } else if (kind instanceof HostKind) {
            bad.addAll(hostForms());
        } else if (kind instanceof LocalAddressKind) {
            bad.addAll(hostForms());
            // TEST-NET-1 (RFC 5737), never a machine's own address; .invalid never resolves (RFC 2606).
            bad.addAll(List.of("192.0.2.1", "no-such-host.invalid"));
        } else if (kind instanceof PatternKind) {
            bad.addAll(List.of("a/b", "bad value!", "x".repeat(1000)));
        } else if (kind instanceof TokenKind k) {
            bad.addAll(List.of("abc12", "t".repeat(k.minLength() - 1), "a token with spaces in it", "t".repeat(k.maxLength() + 1),
                    "tok=en-with-an-equals-sign-inside", "tökén-with-accented-letters"));
        } else if (kind instanceof PathKind) {
            bad.addAll(List.of("relative/dir", "./x", "~/nvshmem", "~", "/opt/x\n", "/opt/\u0000x"));
        } else if (kind instanceof NameListKind k) {
            bad.addAll(List.of("^", "=", "^=", "=^eth0", "eth0,,eth1", ",eth0", "eth0,", "eth0 ", "eth0, eth1",
                    "eth0,^lo", "eth0,=lo", "a/b", "x".repeat(k.maxNameLength() + 1)));
            bad.addAll(k.ports() ? List.of("mlx5_0:", "mlx5_0:x", "mlx5_0:0", ":1") : List.of("eth0:1"));
        } else if (kind instanceof ShmemSizeKind k) {
            bad.addAll(List.of("1.5G", "1GiB", "1GB", "-1", "-1G", "1e3", "0x10", "4 G", "1X", "G"));
            bad.add(Long.toString(k.min() - 1));
            bad.add(java.math.BigInteger.valueOf(k.max()).add(java.math.BigInteger.ONE).toString());
        } else if (kind instanceof FilePathKind) {
            bad.addAll(List.of("libnccl.so.2", "lib/libnccl.so.2", "./libnccl.so.2", "/tmp", "/", "/a\nb"));
        } else if (kind instanceof EtcdStoreKind) {
            bad.addAll(List.of("http://10.0.0.1:2379/job", "etcd:/10.0.0.1:2379/job", "10.0.0.1:2379/job", "etcd://10.0.0.1:2379",
                    "etcd://10.0.0.1:2379/", "etcd:///job", "etcd://10.0.0.1/job", "etcd://10.0.0.1:0/job",
                    "etcd://10.0.0.1:65536/job", "etcd://10.0.0.1:23x9/job", "etcd://10.0.0.1:2379,/job",
                    "etcd://,10.0.0.1:2379/job", "etcd://999.1.1.1:2379/job", "etcd://::1:2379/job", "etcd://[::1/job",
                    "etcd://10.0.0.1:2379/a//b", "etcd://10.0.0.1:2379/job/", "etcd://10.0.0.1:2379/j ob",
                    "ETCD://10.0.0.1:2379/job"));
        } else {
            throw new AssertionError("no bad values for kind " + kind + ": add them here");
        }
        return bad;
    }

    private static List<String> hostForms() {
        return List.of("not a host", "999.1.1.1", "1.2.3", "127.1", "010.0.0.1", "a..b", "-a.b", "host:80", "::g", "[::1");
    }

    static List<String> goodValues(ValueKind kind) {
        if (kind instanceof IntegerKind k) {
            return List.of(Long.toString(k.min()), " " + k.min() + " ");
        } else if (kind instanceof BooleanKind) {
            return List.of("true", "FALSE", "1", "0", "Yes", "no");
        } else if (kind instanceof DurationKind k) {
            return List.of(k.min().toMillis() + "ms", k.max().toMillis() + "ms", "PT" + k.min().toMillis() / 1000.0 + "S");
        } else if (kind instanceof SizeKind k) {
            return List.of(Long.toString(k.min()), ByteSize.format(k.max()), k.max() + " B");
        } else if (kind instanceof ChoiceKind k) {
            return k.ids().stream().flatMap(id -> Stream.of(id, id.toUpperCase(Locale.ROOT))).toList();
        } else if (kind instanceof HostKind) {
            return List.of("localhost", "10.0.0.1", "::1", "my_service.local", "node-0.cluster.local.");
        } else if (kind instanceof LocalAddressKind) {
            return List.of("0.0.0.0", "::", "127.0.0.1", "::1", "localhost");
        } else if (kind instanceof PatternKind) {
            return List.of("run-1.a_b");
        } else if (kind instanceof TokenKind k) {
            return List.of("t".repeat(k.minLength()), "abcDEF0123456789-._~+/==", "t".repeat(k.maxLength()));
        } else if (kind instanceof PathKind) {
            return List.of("/opt/nvshmem", "/", "/path with space/x");
        } else if (kind instanceof NameListKind k) {
            List<String> good = new ArrayList<>(List.of("lo", "^docker,lo", "=eth0", "^=eth0,eth1", "x".repeat(k.maxNameLength())));
            if (k.ports()) {
                good.add("mlx5_0:1,mlx5_1");
            }
            return good;
        } else if (kind instanceof ShmemSizeKind k) {
            return List.of(Long.toString(k.min()), "512M", "2g", "1T", Long.toString(k.max()));
        } else if (kind instanceof FilePathKind) {
            return List.of("/opt/nccl/lib/libnccl.so.2", "/no/such/dir/libnccl.so.2");
        } else if (kind instanceof EtcdStoreKind) {
            return List.of("etcd://127.0.0.1:2379/job", "etcd://etcd-0.etcd:2379,etcd-1.etcd:2379,[::1]:2379/jobs/job-42.a_b");
        }
        throw new AssertionError("no good values for kind " + kind + ": add them here");
    }

    @TestFactory
    Stream<DynamicTest> everyBadValueIsOneLineNamingTheVariable() {
        return Stream.of(ConfigVariable.values()).flatMap(variable -> badValues(variable.kind()).stream()
                .map(value -> DynamicTest.dynamicTest(variable + "=" + ConfigVariable.shown(value), () -> {
                    List<String> problems = SymmemConfigLoader.problems(Map.of(variable.name(), value), new Properties());
                    assertThat(problems).as("%s=%s", variable, value).hasSize(1);
                    String problem = problems.get(0);
                    if (variable.isSecret()) {
                        assertThat(problem).as("a secret is never quoted").doesNotContain(value.trim().isEmpty() ? "\u0000" : value);
                    }
                    assertThat(problem).startsWith(variable.named(value) + " is invalid: ")
                            .contains(variable.allowed()).doesNotContain("\n").doesNotContain("\r")
                            .doesNotContain("SRCFG").doesNotContain("Exception");
                })));
    }

    @TestFactory
    Stream<DynamicTest> everyGoodValueLoads() {
        return Stream.of(ConfigVariable.values()).flatMap(variable -> goodValues(variable.kind()).stream()
                .map(value -> DynamicTest.dynamicTest(variable + "=" + ConfigVariable.shown(value), () -> {
                    Map<String, String> env = new HashMap<>(Map.of("RANK", "0", "WORLD_SIZE", "1"));
                    env.put(variable.name(), value);
                    assertThat(SymmemConfigLoader.problems(env, new Properties())).as("%s=%s", variable, value).isEmpty();
                })));
    }

    @TestFactory
    Stream<DynamicTest> theDurationBoundsAreInclusive() {
        return Stream.of(ConfigVariable.values()).filter(v -> v.kind() instanceof DurationKind).map(variable ->
                DynamicTest.dynamicTest(variable.name(), () -> {
                    DurationKind kind = (DurationKind) variable.kind();
                    assertThat(variable.problem(kind.min().toMillis() + "ms")).isEmpty();
                    assertThat(variable.problem(kind.max().toMillis() + "ms")).isEmpty();
                    assertThat(variable.problem(kind.max().plus(Duration.ofMillis(1)).toMillis() + "ms")).isPresent();
                }));
    }
}
