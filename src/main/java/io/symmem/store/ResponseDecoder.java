package io.symmem.store;

/**
 * Client side: decodes the answer to one request. Returns null when the answer is not complete yet
 * (the caller rewinds the input); throws {@link StoreProtocolException} on an impossible answer.
 */
@FunctionalInterface
interface ResponseDecoder<T> {

    T decode(FrameInput in);

    /** int64 answers: ADD, GETNUMKEYS, DELETE_KEY. */
    static ResponseDecoder<Long> int64() {
        return in -> in.has(8) ? in.readLongLE() : null;
    }

    /** PING: the uint32 nonce. */
    static ResponseDecoder<Integer> uint32() {
        return in -> in.has(4) ? in.readIntLE() : null;
    }

    /** CHECK: READY → true, NOT_READY → false. */
    static ResponseDecoder<Boolean> checkResult() {
        return in -> {
            if (!in.has(1)) {
                return null;
            }
            int answer = in.readUnsignedByte();
            if (answer == TcpStoreWire.CHECK_READY) {
                return Boolean.TRUE;
            }
            if (answer == TcpStoreWire.CHECK_NOT_READY) {
                return Boolean.FALSE;
            }
            throw new StoreProtocolException("CHECK answered " + answer + ", expected READY or NOT_READY");
        };
    }

    /** GET: uint64 length + bytes, bounded so a broken server cannot make us allocate without limit. */
    static ResponseDecoder<byte[]> value(int maxValueBytes) {
        return in -> {
            if (!in.has(8)) {
                return null;
            }
            long length = in.readLongLE();
            if (length < 0 || length > maxValueBytes) {
                throw new StoreProtocolException("GET answered a value of " + Long.toUnsignedString(length)
                        + " bytes, over the limit of " + maxValueBytes);
            }
            return in.has(length) ? in.readBytes((int) length) : null;
        };
    }
}
