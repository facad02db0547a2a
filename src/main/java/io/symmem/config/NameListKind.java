package io.symmem.config;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A device list the way NCCL writes it ({@code NCCL_SOCKET_IFNAME}, {@code NCCL_IB_HCA}) and NVSHMEM
 * reads it ({@code NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME}, {@code NVSHMEM_HCA_LIST}): an optional leading
 * {@code ^} (exclude these), then an optional {@code =} (exact names instead of prefixes), then names
 * separated by commas; with {@code ports}, each name may end in {@code :port} ({@code mlx5_0:1}).
 *
 * <p>Stricter than the libraries, which take any text and silently match nothing with it: an empty
 * entry ({@code eth0,,eth1}), a {@code ^} or {@code =} inside the list ({@code eth0,^docker}: only
 * the first character means exclude) or a name longer than the kernel allows is a mistake, not a
 * name. Which names exist on this host is checked at start-up ({@link InterfaceSpec}).
 *
 * @param maxNameLength longest name: 15 for network interfaces (the kernel's IFNAMSIZ less its NUL),
 *        64 for InfiniBand devices
 */
public record NameListKind(int maxNameLength, boolean ports) implements ValueKind {
    /** Network interfaces: {@code eth0}, {@code ^docker,lo}, {@code =ib0}. */
    public static final NameListKind INTERFACES = new NameListKind(15, false);
    /** InfiniBand devices, each with an optional port: {@code mlx5_0:1,mlx5_1}. */
    public static final NameListKind HCAS = new NameListKind(64, true);

    // Printable ASCII other than the list's own syntax; '/' and ':' never occur in device names.
    private static final Pattern NAME = Pattern.compile("[!-~&&[^,:/^=]]+");
    private static final Pattern PORT = Pattern.compile("[1-9][0-9]{0,4}");

    @Override
    public Optional<String> refusal(String value) {
        String list = InterfaceSpec.body(value);
        if (list.isEmpty()) {
            return Optional.of("no names after '" + value + "'");
        }
        for (String entry : list.split(",", -1)) {
            Optional<String> problem = entryProblem(entry);
            if (problem.isPresent()) {
                return problem;
            }
        }
        return Optional.empty();
    }

    private Optional<String> entryProblem(String entry) {
        if (entry.isEmpty()) {
            return Optional.of("an empty entry");
        }
        String name = entry;
        int colon = entry.indexOf(':');
        if (colon >= 0) {
            if (!ports) {
                return Optional.of("'" + entry + "' has a ':'");
            }
            if (!PORT.matcher(entry.substring(colon + 1)).matches()) {
                return Optional.of("'" + entry + "': the port after ':' must be a number from 1");
            }
            name = entry.substring(0, colon);
        }
        if (name.startsWith("^") || name.startsWith("=")) {
            return Optional.of("'" + entry + "': '" + name.charAt(0) + "' counts only at the start of the whole list");
        }
        if (!NAME.matcher(name).matches()) {
            return Optional.of("'" + entry + "' is not a device name");
        }
        if (name.length() > maxNameLength) {
            return Optional.of("'" + name + "' is longer than " + maxNameLength + " characters");
        }
        return Optional.empty();
    }
}
