package io.symmem.store.wire;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

/**
 * Test side: writes request frames from the wire table of docs/store.md (not with the client's
 * encoder), and describes decoded requests as text so that two decodes can be compared (records that
 * hold arrays compare them by identity).
 */
final class WireFrames {

    private WireFrames() {}

    static byte[] encode(List<StoreRequest> requests) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (StoreRequest request : requests) {
            out.writeBytes(encode(request));
        }
        return out.toByteArray();
    }

    static byte[] encode(StoreRequest request) {
        Frame f = new Frame(request.type().code());
        if (request instanceof StoreRequest.Validate r) {
            f.u32(r.magic());
        } else if (request instanceof StoreRequest.Set r) {
            f.key(r.key()).bytes(r.value());
        } else if (request instanceof StoreRequest.CompareSet r) {
            f.key(r.key()).bytes(r.expected()).bytes(r.desired());
        } else if (request instanceof StoreRequest.Get r) {
            f.key(r.key());
        } else if (request instanceof StoreRequest.Add r) {
            f.key(r.key()).i64(r.delta());
        } else if (request instanceof StoreRequest.Check r) {
            f.keys(r.keys());
        } else if (request instanceof StoreRequest.Wait r) {
            f.keys(r.keys());
        } else if (request instanceof StoreRequest.DeleteKey r) {
            f.key(r.key());
        } else if (request instanceof StoreRequest.Append r) {
            f.key(r.key()).bytes(r.value());
        } else if (request instanceof StoreRequest.MultiGet r) {
            f.keys(r.keys());
        } else if (request instanceof StoreRequest.MultiSet r) {
            f.i64(r.keys().size());
            for (int i = 0; i < r.keys().size(); i++) {
                f.key(r.keys().get(i)).bytes(r.values().get(i));
            }
        } else if (request instanceof StoreRequest.Ping r) {
            f.u32(r.nonce());
        } else if (request instanceof StoreRequest.QueuePush r) {
            f.key(r.key()).bytes(r.value());
        } else if (request instanceof StoreRequest.QueuePop r) {
            f.key(r.key());
        } else if (request instanceof StoreRequest.QueueLen r) {
            f.key(r.key());
        }
        // GETNUMKEYS, CANCEL_WAIT, LIST_KEYS: the type byte alone.
        return f.out.toByteArray();
    }

    /** A request as text: its type, keys and the hex of its values. */
    static String describe(StoreRequest request) {
        StringBuilder text = new StringBuilder(request.type().name());
        if (request instanceof StoreRequest.Validate r) {
            text.append(' ').append(r.magic());
        } else if (request instanceof StoreRequest.Set r) {
            text.append(key(r.key())).append(hex(r.value()));
        } else if (request instanceof StoreRequest.CompareSet r) {
            text.append(key(r.key())).append(hex(r.expected())).append(hex(r.desired()));
        } else if (request instanceof StoreRequest.Get r) {
            text.append(key(r.key()));
        } else if (request instanceof StoreRequest.Add r) {
            text.append(key(r.key())).append(' ').append(r.delta());
        } else if (request instanceof StoreRequest.Check r) {
            r.keys().forEach(k -> text.append(key(k)));
        } else if (request instanceof StoreRequest.Wait r) {
            r.keys().forEach(k -> text.append(key(k)));
        } else if (request instanceof StoreRequest.DeleteKey r) {
            text.append(key(r.key()));
        } else if (request instanceof StoreRequest.Append r) {
            text.append(key(r.key())).append(hex(r.value()));
        } else if (request instanceof StoreRequest.MultiGet r) {
            r.keys().forEach(k -> text.append(key(k)));
        } else if (request instanceof StoreRequest.MultiSet r) {
            for (int i = 0; i < r.keys().size(); i++) {
                text.append(key(r.keys().get(i))).append(hex(r.values().get(i)));
            }
        } else if (request instanceof StoreRequest.Ping r) {
            text.append(' ').append(r.nonce());
        } else if (request instanceof StoreRequest.QueuePush r) {
            text.append(key(r.key())).append(hex(r.value()));
        } else if (request instanceof StoreRequest.QueuePop r) {
            text.append(key(r.key()));
        } else if (request instanceof StoreRequest.QueueLen r) {
            text.append(key(r.key()));
        }
        return text.toString();
    }

    private static String key(String key) {
        return " key:" + HexFormat.of().formatHex(key.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static String hex(byte[] value) {
        return " value(" + value.length + "):" + HexFormat.of().formatHex(value);
    }

    private static final class Frame {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Frame(int type) {
            out.write(type);
        }

        Frame u32(int value) {
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
            return this;
        }

        Frame i64(long value) {
            out.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array());
            return this;
        }

        /** Server keys are byte strings held as ISO-8859-1 text: one char per byte. */
        Frame key(String key) {
            return bytes(key.getBytes(StandardCharsets.ISO_8859_1));
        }

        Frame keys(List<String> keys) {
            i64(keys.size());
            keys.forEach(this::key);
            return this;
        }

        Frame bytes(byte[] value) {
            i64(value.length);
            out.writeBytes(value);
            return this;
        }
    }
}
