package io.symmem.nativ;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;

/**
 * The environment variables libsymmem reads itself (thread counts, crossovers, kernel shapes): the
 * native library's own table, so that {@code symmem config} lists and checks them beside the
 * variables of the Java side without a second list that could drift from the one the code reads.
 * <pre>{@code
 * for (NativeTunables.Tunable t : NativeTunables.list()) {
 *     System.out.println(t.name() + ": " + t.allowed() + t.problem().map(p -> " -> " + p).orElse(""));
 * }
 * }</pre>
 */
public final class NativeTunables {
    static {
        SymmemLibrary.ensureLoaded();
    }

    private NativeTunables() {
    }

    /**
     * One tunable: its variable, the backend that reads it ("host" or "cuda"), what it allows in
     * words (the default included) and, when this process's value is not valid, the library's message.
     */
    public record Tunable(String name, String backend, String allowed, Optional<String> problem) {
    }

    /** Every tunable, in the library's order, each checked against this process's environment. */
    public static List<Tunable> list() {
        int count = SymmemLibrary.symmem_tunable_count();
        List<Tunable> tunables = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Optional<String> problem = SymmemLibrary.symmem_tunable_check(i) == 0 ? Optional.empty()
                    : Optional.of(SymmemLibrary.symmem_last_error().getString());
            tunables.add(new Tunable(SymmemLibrary.symmem_tunable_name(i).getString(),
                    SymmemLibrary.symmem_tunable_backend(i).getString(),
                    SymmemLibrary.symmem_tunable_allowed(i).getString(), problem));
        }
        return List.copyOf(tunables);
    }

    /**
     * The value the library uses for the tunable {@code name}, read from this process's environment
     * as the library reads it: the variable's value, or the default when unset or empty (a default
     * that the backend computes reads as -1, i.e. UINT64_MAX). Throws
     * {@link NativeException.InvalidArgument} for an unknown name or a value that is not valid.
     */
    public static long value(String name) {
        int count = SymmemLibrary.symmem_tunable_count();
        for (int i = 0; i < count; i++) {
            if (SymmemLibrary.symmem_tunable_name(i).getString().equals(name)) {
                try (LongPointer value = new LongPointer(1); IntPointer set = new IntPointer(1)) {
                    Status.check(SymmemLibrary.symmem_tunable_value(i, value, set), "symmem_tunable_value");
                    return value.get();
                }
            }
        }
        throw new NativeException.InvalidArgument("no native tunable is named " + name);
    }
}
