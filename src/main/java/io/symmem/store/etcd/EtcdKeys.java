package io.symmem.store.etcd;

import io.etcd.jetcd.ByteSequence;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The layout of a store's keys inside its job prefix (the client's namespace, so none of these
 * carries the prefix itself):
 * <ul>
 * <li>{@code k/<key>}: values, the only keys numKeys and listKeys see;</li>
 * <li>{@code q/<n>/<key>/<item>}: the items of queue {@code key} ({@code n} = its length in UTF-8
 * bytes, so that queue "a" never takes the items of queue "a/b"), in order of creation revision;</li>
 * <li>{@code r/<client>/<op>}: receipts of writes that must apply at most once (see
 * {@link OnceWrites}); they live on the writer's lease;</li>
 * <li>{@code ping}: never written; what a ping reads.</li>
 * </ul>
 */
final class EtcdKeys {

    static final ByteSequence VALUES = bytes("k/");
    static final ByteSequence PING = bytes("ping");

    private EtcdKeys() {}

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    static ByteSequence value(String key) {
        return bytes("k/" + key);
    }

    /** The user key of a value key (one that starts with {@code k/}). */
    static String userKey(ByteSequence valueKey) {
        return valueKey.substring(VALUES.size()).toString(StandardCharsets.UTF_8);
    }

    static ByteSequence queue(String key) {
        return bytes("q/" + key.getBytes(StandardCharsets.UTF_8).length + "/" + key + "/");
    }

    static ByteSequence receipt(String client, long op) {
        return bytes("r/" + client + "/" + op);
    }

    /** The end of the range of every key that starts with {@code prefix} (its last byte incremented). */
    static ByteSequence prefixEnd(ByteSequence prefix) {
        byte[] end = prefix.getBytes();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return ByteSequence.from(Arrays.copyOf(end, i + 1));
            }
        }
        throw new IllegalArgumentException("no range end for a prefix of 0xff bytes");
    }

    /** The exclusive end of a range whose last key is {@code last}. */
    static ByteSequence after(ByteSequence last) {
        return last.concat(ByteSequence.from(new byte[] {0}));
    }

    static int compare(ByteSequence a, ByteSequence b) {
        return Arrays.compareUnsigned(a.getBytes(), b.getBytes());
    }
}
