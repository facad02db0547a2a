package io.symmem.store.wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How a user key becomes a key on the wire and in the server's state, shared by the TCP client and
 * the in-process store so that both (and PyTorch clients) see the same keys: TCPStore clients put "/" in
 * front of every key; the server holds keys as ISO-8859-1 strings of the raw bytes (one char per byte).
 */
public final class WireKeys {

    private WireKeys() {}

    /** The key as the TCP client sends it (the encoder turns it into UTF-8 bytes). */
    public static String onWire(String key) {
        return TcpStoreWire.KEY_PREFIX + key;
    }

    public static List<String> onWire(List<String> keys) {
        List<String> wire = new ArrayList<>(keys.size());
        for (String key : keys) {
            wire.add(onWire(key));
        }
        return wire;
    }

    /** The key as the server stores it: the UTF-8 bytes of the wire key, one char per byte. */
    public static String inState(String key) {
        return new String(onWire(key).getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    public static List<String> inState(List<String> keys) {
        List<String> state = new ArrayList<>(keys.size());
        for (String key : keys) {
            state.add(inState(key));
        }
        return state;
    }

    /**
     * User keys from wire keys decoded as UTF-8: the prefix is removed, and keys without it (set by a
     * client that does not prefix) are left out, as TCPStore's list_keys does.
     */
    public static List<String> fromWire(List<String> wireKeys) {
        List<String> keys = new ArrayList<>(wireKeys.size());
        for (String wire : wireKeys) {
            if (wire.startsWith(TcpStoreWire.KEY_PREFIX)) {
                keys.add(wire.substring(TcpStoreWire.KEY_PREFIX.length()));
            }
        }
        return keys;
    }

    /** {@link #fromWire} for keys as the server stores them (ISO-8859-1 of the bytes). */
    public static List<String> fromState(List<String> stateKeys) {
        List<String> wire = new ArrayList<>(stateKeys.size());
        for (String key : stateKeys) {
            wire.add(new String(key.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
        }
        return fromWire(wire);
    }
}
