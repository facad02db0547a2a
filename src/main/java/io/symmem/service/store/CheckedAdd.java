package io.symmem.service.store;

import io.smallrye.mutiny.Uni;
import io.symmem.store.CounterValues;
import io.symmem.store.CurrentValue;
import io.symmem.store.Store;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * {@code POST /v1/store/keys/{key}/add}: reads the value first and refuses with 400 what the store's
 * ADD cannot do right: a value that is not a decimal integer (over TCP the server would close the
 * connection) and a sum outside the signed 64-bit range (TCPStore, and so our server, wraps around).
 * The value can still change between the read and the ADD; then a value that is no longer an integer
 * is refused by the store itself (also 400, and only a side connection of the rank is lost), and a sum
 * that now overflows wraps around as on the wire.
 */
public final class CheckedAdd {

    /** Longest value quoted in an error; longer ones are described by their length. */
    private static final int QUOTED = 40;

    private CheckedAdd() {}

    public static Uni<Long> add(Store store, String key, long delta) {
        return CurrentValue.read(store, key).flatMap(current -> {
            long base = current.isEmpty() ? 0 : CounterValues.parse(current.get())
                    .orElseThrow(() -> new StoreHttpException(400, "key '" + key + "' holds " + quote(current)
                            + ", not a decimal integer: add works on integers only", key));
            try {
                Math.addExact(base, delta);
            } catch (ArithmeticException overflow) {
                throw new StoreHttpException(400, "adding " + delta + " to key '" + key + "' (" + base
                        + ") overflows the signed 64-bit range (the store's ADD would wrap around to " + (base + delta) + ")", key);
            }
            return store.add(key, delta).onFailure(IllegalArgumentException.class)
                    .transform(e -> new StoreHttpException(400, e.getMessage(), key));
        });
    }

    private static String quote(Optional<byte[]> value) {
        byte[] bytes = value.orElseThrow();
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        boolean printable = text.chars().allMatch(c -> c >= 0x20 && c < 0x7F);
        return printable && bytes.length <= QUOTED ? "'" + text + "'" : "a value of " + bytes.length + " bytes";
    }
}
