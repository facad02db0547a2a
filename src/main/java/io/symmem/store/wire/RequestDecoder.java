package io.symmem.store.wire;

import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Server side: turns received bytes into {@link StoreRequest}s. Lengths are checked against
 * {@link StoreLimits} the moment they are read, so a frame that announces a huge key or value is
 * refused without buffering it.
 *
 * <p>Decoding resumes where it stopped: a frame that has not fully arrived keeps its fields decoded
 * so far (and a key or value in progress keeps its bytes), so each byte is decoded once however the
 * frame is cut into chunks. Before, an incomplete frame was decoded again from its start on every
 * chunk: a 68 MB MULTI_SET in 64 KiB writes cost about a thousand decodes of a growing frame, and
 * every other client waited seconds.
 *
 * <p>Keys are decoded as ISO-8859-1: one char per byte, so any byte string TCPStore allows (it
 * uses std::string) round-trips exactly, and key lengths in chars equal wire lengths in bytes.
 */
public final class RequestDecoder {

    /** The wire fields after the query type byte, in order. */
    private enum Field { U32, I64, KEY, VALUE, KEY_LIST, PAIR_LIST }

    private static final Map<QueryType, Field[]> FIELDS = new EnumMap<>(QueryType.class);

    static {
        Field[] none = {};
        FIELDS.put(QueryType.VALIDATE, new Field[] {Field.U32});
        FIELDS.put(QueryType.SET, new Field[] {Field.KEY, Field.VALUE});
        FIELDS.put(QueryType.COMPARE_SET, new Field[] {Field.KEY, Field.VALUE, Field.VALUE});
        FIELDS.put(QueryType.GET, new Field[] {Field.KEY});
        FIELDS.put(QueryType.ADD, new Field[] {Field.KEY, Field.I64});
        FIELDS.put(QueryType.CHECK, new Field[] {Field.KEY_LIST});
        FIELDS.put(QueryType.WAIT, new Field[] {Field.KEY_LIST});
        FIELDS.put(QueryType.GETNUMKEYS, none);
        FIELDS.put(QueryType.DELETE_KEY, new Field[] {Field.KEY});
        FIELDS.put(QueryType.APPEND, new Field[] {Field.KEY, Field.VALUE});
        FIELDS.put(QueryType.MULTI_GET, new Field[] {Field.KEY_LIST});
        FIELDS.put(QueryType.MULTI_SET, new Field[] {Field.PAIR_LIST});
        FIELDS.put(QueryType.CANCEL_WAIT, none);
        FIELDS.put(QueryType.PING, new Field[] {Field.U32});
        FIELDS.put(QueryType.QUEUE_PUSH, new Field[] {Field.KEY, Field.VALUE});
        FIELDS.put(QueryType.QUEUE_POP, new Field[] {Field.KEY});
        FIELDS.put(QueryType.QUEUE_LEN, new Field[] {Field.KEY});
        FIELDS.put(QueryType.LIST_KEYS, none);
    }

    private final StoreLimits limits;
    private final VectorReader vector = new VectorReader();

    // The frame in progress; type == null between frames.
    private QueryType type;
    private Field[] plan;
    private final List<Object> fields = new ArrayList<>(3);
    private long frameStart;
    private long lastFrameBytes;
    // A KEY_LIST or PAIR_LIST in progress: count -1 until its count has been read.
    private long count = -1;
    private List<String> keys;
    private List<byte[]> values;
    private String pairKey;

    public RequestDecoder(StoreLimits limits) {
        this.limits = limits;
    }

    /**
     * Decodes the next frame, or returns null when it has not fully arrived yet; what arrived of it is
     * consumed and kept, so call again with the same input once more bytes were appended.
     *
     * @throws StoreProtocolException for an unknown query type or a length over the limits; the
     *         decoder is unusable afterwards (the connection is closed)
     */
    public StoreRequest next(FrameInput in) {
        if (type == null) {
            if (!in.has(1)) {
                return null;
            }
            frameStart = in.consumed();
            int code = in.readUnsignedByte();
            QueryType started = QueryType.fromCode(code);
            if (started == null) {
                throw new StoreProtocolException("unknown query type " + code);
            }
            plan = FIELDS.get(started);
            if (plan == null) {
                throw new StoreProtocolException("query type " + started + " is not supported by this store");
            }
            type = started;
            fields.clear();
        }
        while (fields.size() < plan.length) {
            Object field = read(plan[fields.size()], in);
            if (field == null) {
                return null;
            }
            fields.add(field);
        }
        StoreRequest request = build(type, fields);
        type = null;
        fields.clear();
        lastFrameBytes = in.consumed() - frameStart;
        return request;
    }

    /** Wire size of the frame {@link #next} returned last (type byte included). */
    public long lastFrameBytes() {
        return lastFrameBytes;
    }

    private Object read(Field field, FrameInput in) {
        switch (field) {
            case U32:
                return in.has(4) ? (Object) in.readIntLE() : null;
            case I64:
                return in.has(8) ? (Object) in.readLongLE() : null;
            case KEY:
                return readKey(in);
            case VALUE:
                return vector.read(in, limits.maxValueBytes(), "value");
            case KEY_LIST:
                return readKeyList(in);
            case PAIR_LIST:
                return readPairList(in);
            default:
                throw new IllegalStateException("unhandled field " + field);
        }
    }

    private String readKey(FrameInput in) {
        byte[] bytes = vector.read(in, limits.maxKeyBytes(), "key");
        return bytes == null ? null : new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** uint64 count, then count keys (CHECK, WAIT, MULTI_GET). */
    private List<String> readKeyList(FrameInput in) {
        if (!readCount(in)) {
            return null;
        }
        while (keys.size() < count) {
            String key = readKey(in);
            if (key == null) {
                return null;
            }
            keys.add(key);
        }
        return finishList();
    }

    /** int64 count, then count × (key, value) (MULTI_SET). Values are kept as they complete, not re-read. */
    private MultiSetPairs readPairList(FrameInput in) {
        if (!readCount(in)) {
            return null;
        }
        while (keys.size() < count) {
            if (pairKey == null) {
                pairKey = readKey(in);
                if (pairKey == null) {
                    return null;
                }
            }
            byte[] value = vector.read(in, limits.maxValueBytes(), "value");
            if (value == null) {
                return null;
            }
            keys.add(pairKey);
            values.add(value);
            pairKey = null;
        }
        MultiSetPairs pairs = new MultiSetPairs(keys, values);
        finishList();
        return pairs;
    }

    private boolean readCount(FrameInput in) {
        if (count >= 0) {
            return true;
        }
        if (!in.has(8)) {
            return false;
        }
        long announced = in.readLongLE();
        if (announced < 0 || announced > limits.maxKeysPerRequest()) {
            throw new StoreProtocolException("request names " + Long.toUnsignedString(announced)
                    + " keys, more than the limit of " + limits.maxKeysPerRequest());
        }
        count = announced;
        // Grown as keys arrive: the count alone must not make the server allocate for 65,536 keys.
        keys = new ArrayList<>((int) Math.min(count, 1024));
        values = new ArrayList<>((int) Math.min(count, 1024));
        return true;
    }

    private List<String> finishList() {
        List<String> done = keys;
        count = -1;
        keys = null;
        values = null;
        return done;
    }

    private record MultiSetPairs(List<String> keys, List<byte[]> values) {}

    @SuppressWarnings("unchecked")
    private static StoreRequest build(QueryType type, List<Object> f) {
        switch (type) {
            case VALIDATE:
                return new StoreRequest.Validate((Integer) f.get(0));
            case SET:
                return new StoreRequest.Set((String) f.get(0), (byte[]) f.get(1));
            case COMPARE_SET:
                return new StoreRequest.CompareSet((String) f.get(0), (byte[]) f.get(1), (byte[]) f.get(2));
            case GET:
                return new StoreRequest.Get((String) f.get(0));
            case ADD:
                return new StoreRequest.Add((String) f.get(0), (Long) f.get(1));
            case CHECK:
                return new StoreRequest.Check((List<String>) f.get(0));
            case WAIT:
                return new StoreRequest.Wait((List<String>) f.get(0));
            case GETNUMKEYS:
                return new StoreRequest.GetNumKeys();
            case DELETE_KEY:
                return new StoreRequest.DeleteKey((String) f.get(0));
            case APPEND:
                return new StoreRequest.Append((String) f.get(0), (byte[]) f.get(1));
            case MULTI_GET:
                return new StoreRequest.MultiGet((List<String>) f.get(0));
            case MULTI_SET: {
                MultiSetPairs pairs = (MultiSetPairs) f.get(0);
                return new StoreRequest.MultiSet(pairs.keys(), pairs.values());
            }
            case CANCEL_WAIT:
                return new StoreRequest.CancelWait();
            case PING:
                return new StoreRequest.Ping((Integer) f.get(0));
            case QUEUE_PUSH:
                return new StoreRequest.QueuePush((String) f.get(0), (byte[]) f.get(1));
            case QUEUE_POP:
                return new StoreRequest.QueuePop((String) f.get(0));
            case QUEUE_LEN:
                return new StoreRequest.QueueLen((String) f.get(0));
            case LIST_KEYS:
                return new StoreRequest.ListKeys();
            default:
                throw new StoreProtocolException("query type " + type + " is not supported by this store");
        }
    }
}
