package io.symmem.store.server;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Part of an answer that has not been encoded for the socket yet. Small frames are kept as bytes;
 * values and keys are kept as references and copied out a slice at a time when the socket can take
 * them, so a GET of a 64 MiB value or a MULTI_GET of 65,536 values costs no copy of the answer up
 * front and no long copy on the event loop. The values referenced are the store's own arrays, which
 * are never modified after they were stored (a set replaces the array).
 */
abstract sealed class AnswerPart {

    /** Bytes left to encode. */
    abstract long remaining();

    /** Appends at most {@code max} (> 0) of the bytes left to {@code out}. */
    abstract void encodeInto(Buffer out, int max);

    /** Whole small frames (PING, CHECK, int64 answers, ...), appended to as answers of a pass come in. */
    static final class Bytes extends AnswerPart {
        private final Buffer bytes;
        private int offset;

        Bytes(Buffer bytes) {
            this.bytes = bytes;
        }

        /** Adds a frame behind the ones held, unless encoding has started. */
        boolean tryAppend(Buffer frame) {
            if (offset > 0 || bytes.length() + frame.length() > AnswerQueue.SLICE_BYTES) {
                return false;
            }
            bytes.appendBuffer(frame);
            return true;
        }

        @Override
        long remaining() {
            return bytes.length() - offset;
        }

        @Override
        void encodeInto(Buffer out, int max) {
            int n = (int) Math.min(max, remaining());
            out.appendBuffer(bytes, offset, n);
            offset += n;
        }
    }

    /** One length-prefixed byte string: uint64 length, then the bytes. */
    static final class Vector extends AnswerPart {
        private final byte[] value;
        /** Bytes encoded so far, the 8 length bytes included. */
        private int done;

        Vector(byte[] value) {
            this.value = value;
        }

        static long size(int length) {
            return 8L + length;
        }

        @Override
        long remaining() {
            return size(value.length) - done;
        }

        @Override
        void encodeInto(Buffer out, int max) {
            while (done < 8 && max > 0) {
                out.appendByte((byte) ((long) value.length >>> (8 * done)));
                done++;
                max--;
            }
            int n = Math.min(max, value.length - (done - 8));
            if (n > 0) {
                out.appendBytes(value, done - 8, n);
                done += n;
            }
        }
    }

    /** MULTI_GET: one length-prefixed value per key, in order. */
    static final class Vectors extends AnswerPart {
        private final VectorSequence<byte[]> values;

        Vectors(List<byte[]> values) {
            this.values = new VectorSequence<>(values, v -> v, v -> v.length);
        }

        @Override
        long remaining() {
            return values.left;
        }

        @Override
        void encodeInto(Buffer out, int max) {
            values.encodeInto(out, max);
        }
    }

    /** LIST_KEYS: int64 count, then each wire key as a length-prefixed string (ISO-8859-1 = its bytes). */
    static final class Keys extends AnswerPart {
        private final int count;
        /** Bytes of the int64 count encoded so far. */
        private int countDone;
        private final VectorSequence<String> keys;

        Keys(List<String> keys) {
            this.count = keys.size();
            // A key's bytes are made only when its turn comes: a long listing is not copied up front.
            this.keys = new VectorSequence<>(keys, k -> k.getBytes(StandardCharsets.ISO_8859_1), String::length);
        }

        @Override
        long remaining() {
            return 8 - countDone + keys.left;
        }

        @Override
        void encodeInto(Buffer out, int max) {
            int start = out.length();
            while (countDone < 8 && out.length() - start < max) {
                out.appendByte((byte) ((long) count >>> (8 * countDone)));
                countDone++;
            }
            keys.encodeInto(out, max - (out.length() - start));
        }
    }

    /** Items written one after another as length-prefixed vectors, resumable at any byte. */
    private static final class VectorSequence<T> {
        private final List<T> items;
        private final Function<T, byte[]> bytes;
        private int index;
        private Vector current;
        long left;

        VectorSequence(List<T> items, Function<T, byte[]> bytes, ToIntFunction<T> length) {
            this.items = items;
            this.bytes = bytes;
            for (T item : items) {
                left += Vector.size(length.applyAsInt(item));
            }
        }

        void encodeInto(Buffer out, int max) {
            int start = out.length();
            while (out.length() - start < max && left > 0) {
                if (current == null || current.remaining() == 0) {
                    current = new Vector(bytes.apply(items.get(index++)));
                }
                int before = out.length();
                current.encodeInto(out, max - (out.length() - start));
                left -= out.length() - before;
            }
        }
    }
}
