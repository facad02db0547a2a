package io.symmem.store.client;

import io.smallrye.mutiny.Uni;
import io.symmem.store.DurationText;
import io.symmem.store.Store;
import io.symmem.store.StoreConnectionLostException;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.StoreSpin;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.server.StoreServer;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.Popped;
import io.symmem.store.wire.RequestEncoder;
import io.symmem.store.wire.ResponseDecoder;
import io.symmem.store.wire.StoreArguments;
import io.symmem.store.wire.TcpStoreWire;
import io.symmem.store.wire.WireKeys;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A {@link Store} over one plain blocking socket, for callers that block anyway (rendezvous, demo,
 * benchmarks, scripts). Every call runs on the caller's thread: it writes its frames, reads the
 * answer and returns a completed {@link Uni}, so there is no hand-off to an event loop and back. That
 * is what makes a get one round trip plus two system calls. Never call it from an event loop; use
 * {@link TcpStoreClient} there.
 *
 * <p>One request at a time (calls are serialised), like PyTorch's TCPStore client. With
 * {@link TcpStoreClient.Options#pipelineWaits()} (our {@link StoreServer} only) a wait and its
 * follow-up (GET, MULTI_GET, QUEUE_POP) go out in one write. Wait deadlines follow TCPStore: at the
 * deadline the client sends CANCEL_WAIT, reads the server's acknowledgement and names the keys still
 * missing. A broken connection fails the call in progress and is re-made by the next call.
 */
public final class BlockingStoreClient implements Store {
    private static final Duration CANCEL_GRACE = Duration.ofSeconds(2);
    /** How long a call polls for its answer before it blocks ({@link StoreSpin}). */
    static final long SPIN_NANOS = StoreSpin.clientNanos();

    private final String host;
    private final int port;
    private final Duration operationTimeout;
    private final TcpStoreClient.Options options;
    private final StoreLimits limits;
    private final byte[] readBuffer = new byte[64 * 1024];
    private Socket socket;
    private InputStream in;
    private OutputStream out;
    private FrameInput input;
    private boolean closed;

    private BlockingStoreClient(String host, int port, Duration operationTimeout, TcpStoreClient.Options options) {
        this.host = host;
        this.port = port;
        this.operationTimeout = operationTimeout;
        this.options = options;
        this.limits = options.limits();
    }

    /**
     * Connects (retrying with backoff until {@code connectTimeout}: rank 0 may start later) and
     * validates the connection. {@code connectTimeout} also bounds every answer that is not a wait.
     */
    public static BlockingStoreClient connect(String host, int port, Duration connectTimeout, TcpStoreClient.Options options) {
        BlockingStoreClient client = new BlockingStoreClient(host, port, connectTimeout, options);
        synchronized (client) {
            client.open(System.nanoTime() + connectTimeout.toNanos());
        }
        return client;
    }

    @Override
    public String describe() {
        return host + ":" + port;
    }

    // ---- operations --------------------------------------------------------------------------

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return run(() -> {
            check(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)));
            send(RequestEncoder.set(WireKeys.onWire(key), value));
            return null;
        });
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return run(() -> {
            check(StoreArguments.checkKey(key, limits));
            return waitThen(List.of(key), timeout, RequestEncoder.get(WireKeys.onWire(key)),
                    ResponseDecoder.value(limits.maxValueBytes()));
        });
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return run(() -> {
            check(StoreArguments.checkKey(key, limits));
            return call(RequestEncoder.add(WireKeys.onWire(key), delta), ResponseDecoder.int64());
        });
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return run(() -> {
            check(StoreArguments.checkKeys(keys, limits));
            if (!keys.isEmpty()) {
                waitThen(keys, timeout, null, null);
            }
            return null;
        });
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return run(() -> {
            check(StoreArguments.checkKeys(keys, limits));
            return call(RequestEncoder.check(WireKeys.onWire(keys)), ResponseDecoder.checkResult());
        });
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return run(() -> {
            check(StoreArguments.checkKey(key, limits));
            return call(RequestEncoder.deleteKey(WireKeys.onWire(key)), ResponseDecoder.int64()) > 0;
        });
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return run(() -> {
            check(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(expected, limits),
                    StoreArguments.checkValue(desired, limits)));
            return call(RequestEncoder.compareSet(WireKeys.onWire(key), expected, desired),
                    ResponseDecoder.value(limits.maxValueBytes()));
        });
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        return run(() -> {
            check(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)));
            send(RequestEncoder.append(WireKeys.onWire(key), value));
            return null;
        });
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return run(() -> {
            check(StoreArguments.checkKeys(keys, limits));
            if (keys.isEmpty()) {
                return List.of();
            }
            return waitThen(keys, timeout, RequestEncoder.multiGet(WireKeys.onWire(keys)),
                    ResponseDecoder.values(keys.size(), limits.maxValueBytes()));
        });
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return run(() -> {
            check(StoreArguments.checkMultiSet(keys, values, limits));
            send(RequestEncoder.multiSet(WireKeys.onWire(keys), values));
            return null;
        });
    }

    @Override
    public Uni<Long> numKeys() {
        return run(() -> call(RequestEncoder.getNumKeys(), ResponseDecoder.int64()));
    }

    @Override
    public Uni<List<String>> listKeys() {
        return run(() -> WireKeys.fromWire(call(RequestEncoder.listKeys(),
                ResponseDecoder.keys(limits.maxKeyBytes(), limits.maxKeysPerRequest()))));
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return run(() -> {
            check(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)));
            send(RequestEncoder.queuePush(WireKeys.onWire(key), value));
            return null;
        });
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return run(() -> {
            check(StoreArguments.checkKey(key, limits));
            long deadline = System.nanoTime() + timeout.toNanos();
            // Another client may pop the value between our wait and our pop: wait again until the deadline.
            while (true) {
                Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
                Popped popped = waitThen(List.of(key), left, RequestEncoder.queuePop(WireKeys.onWire(key)),
                        ResponseDecoder.popped(limits.maxValueBytes()));
                if (popped.value() != null) {
                    return popped.value();
                }
                if (System.nanoTime() >= deadline) {
                    throw new StoreTimeoutException("store " + describe() + ": timed out after " + DurationText.of(timeout)
                            + " waiting for a value in queue [" + key + "]", List.of(key));
                }
            }
        });
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return run(() -> {
            check(StoreArguments.checkKey(key, limits));
            return call(RequestEncoder.queueLength(WireKeys.onWire(key)), ResponseDecoder.int64());
        });
    }

    @Override
    public Uni<Void> ping() {
        return run(() -> {
            int nonce = ThreadLocalRandom.current().nextInt();
            int echoed = call(RequestEncoder.ping(nonce), ResponseDecoder.uint32());
            if (echoed != nonce) {
                throw new StoreProtocolException("PING answered " + echoed + ", expected " + nonce);
            }
            return null;
        });
    }

    @Override
    public synchronized void close() {
        closed = true;
        drop();
    }

    // ---- the request/answer machinery --------------------------------------------------------

    private interface Call<T> {
        T run() throws IOException;
    }

    /** Runs one operation on the caller's thread; the Uni carries its result or failure. */
    private synchronized <T> Uni<T> run(Call<T> call) {
        try {
            if (closed) {
                throw new StoreException("client of store " + describe() + " is closed");
            }
            if (socket == null) {
                open(System.nanoTime() + operationTimeout.toNanos());
            }
            return Uni.createFrom().item(call.run());
        } catch (StoreTimeoutException | IllegalArgumentException e) {
            return Uni.createFrom().failure(e);
        } catch (StoreException e) {
            drop();
            return Uni.createFrom().failure(e);
        } catch (IOException e) {
            drop();
            return Uni.createFrom().failure(new StoreConnectionLostException("connection to store " + describe() + " lost: "
                    + e.getMessage(), e));
        }
    }

    private static void check(RuntimeException problem) {
        if (problem != null) {
            throw problem;
        }
    }

    private void send(Buffer frame) throws IOException {
        out.write(frame.getBytes());
        out.flush();
    }

    private <T> T call(Buffer frame, ResponseDecoder<T> decoder) throws IOException {
        send(frame);
        return read(decoder, System.nanoTime() + operationTimeout.toNanos(), "an answer");
    }

    /**
     * WAIT for {@code keys}, then (if given) the follow-up request; pipelined in one write when the
     * server holds answered requests behind a pending WAIT (ours does).
     */
    private <T> T waitThen(List<String> keys, Duration timeout, Buffer followUp, ResponseDecoder<T> decoder)
            throws IOException {
        Buffer wait = RequestEncoder.waitFor(WireKeys.onWire(keys));
        boolean pipelined = followUp != null && options.pipelineWaits();
        send(pipelined ? wait.copy().appendBuffer(followUp) : wait);
        long deadline = System.nanoTime() + timeout.toNanos();
        int answer;
        try {
            answer = read(ResponseDecoder.uint8(), deadline, "the keys");
        } catch (SocketTimeoutException expired) {
            cancelWait(pipelined ? decoder : null);
            List<String> missing = missing(keys);
            throw new StoreTimeoutException("store " + describe() + ": timed out after " + DurationText.of(timeout)
                    + " waiting for key(s) " + missing, missing);
        }
        if (answer != TcpStoreWire.WAIT_STOP_WAITING) {
            throw new StoreProtocolException("WAIT answered " + answer + ", expected STOP_WAITING");
        }
        if (followUp == null) {
            return null;
        }
        if (!pipelined) {
            send(followUp);
        }
        return read(decoder, System.nanoTime() + operationTimeout.toNanos(), "an answer");
    }

    /**
     * CANCEL_WAIT, then read the server's side of it: WAIT_CANCELED in the wait's place, or
     * STOP_WAITING (the keys arrived just before the cancel) followed by WAIT_CANCELED; then the held
     * follow-up's answer, which is dropped.
     */
    private void cancelWait(ResponseDecoder<?> heldFollowUp) throws IOException {
        send(RequestEncoder.cancelWait());
        long deadline = System.nanoTime() + CANCEL_GRACE.toNanos();
        int answer = read(ResponseDecoder.uint8(), deadline, "the answer to CANCEL_WAIT");
        if (answer == TcpStoreWire.WAIT_STOP_WAITING) {
            answer = read(ResponseDecoder.uint8(), deadline, "the answer to CANCEL_WAIT");
        }
        if (answer != TcpStoreWire.WAIT_CANCELED) {
            throw new StoreProtocolException("CANCEL_WAIT answered " + answer + ", expected WAIT_CANCELED");
        }
        if (heldFollowUp != null) {
            read(heldFollowUp, deadline, "the answer held behind a cancelled WAIT");
        }
    }

    private List<String> missing(List<String> keys) throws IOException {
        List<String> missing = new ArrayList<>();
        for (String key : keys) {
            if (!call(RequestEncoder.check(List.of(WireKeys.onWire(key))), ResponseDecoder.checkResult())) {
                missing.add(key);
            }
        }
        return missing.isEmpty() ? keys : missing;
    }

    /** Decodes one answer, reading more bytes until it is complete or the deadline passes. */
    private <T> T read(ResponseDecoder<T> decoder, long deadline, String what) throws IOException {
        while (true) {
            int mark = input.position();
            T value = decoder.decode(input);
            if (value != null) {
                input.discardConsumed();
                return value;
            }
            input.rewind(mark);
            long leftMillis = (deadline - System.nanoTime()) / 1_000_000;
            if (leftMillis <= 0) {
                throw new SocketTimeoutException("no " + what + " from store " + describe() + " in time");
            }
            spinUntilReadable(deadline);
            socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, leftMillis));
            int n = in.read(readBuffer);
            if (n < 0) {
                throw new IOException("store " + describe() + " closed the connection");
            }
            input.append(Buffer.buffer().appendBytes(readBuffer, 0, n));
        }
    }

    /**
     * A store answers in microseconds; sleeping in read() and being woken costs several more. So
     * poll the socket for {@link #SPIN_NANOS} first (FIONREAD via available()), then block.
     */
    private void spinUntilReadable(long deadline) throws IOException {
        if (SPIN_NANOS == 0) {
            return;
        }
        long spinEnd = Math.min(deadline, System.nanoTime() + SPIN_NANOS);
        while (in.available() == 0 && System.nanoTime() < spinEnd) {
            Thread.onSpinWait();
        }
    }

    private void open(long deadline) {
        long backoffMillis = 50;
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try {
                Socket candidate = new Socket();
                candidate.setTcpNoDelay(true);
                long leftMillis = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
                candidate.connect(new InetSocketAddress(host, port), (int) Math.min(leftMillis, Integer.MAX_VALUE));
                if (SelfConnection.is(candidate.getLocalPort(), candidate.getPort(),
                        candidate.getLocalAddress().getHostAddress(), candidate.getInetAddress().getHostAddress())) {
                    candidate.close();
                    throw SelfConnection.error(describe());
                }
                socket = candidate;
                in = candidate.getInputStream();
                out = candidate.getOutputStream();
                input = new FrameInput();
                send(RequestEncoder.validate());
                return;
            } catch (IOException e) {
                last = e;
                drop();
                sleepQuietly(Math.min(backoffMillis, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
                backoffMillis = Math.min(backoffMillis * 2, 1000);
            }
        }
        throw new StoreException("could not reach store " + describe() + " in time"
                + (last == null ? "" : ": " + last.getMessage()), last);
    }

    private void drop() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing a broken socket: nothing left to release
            }
        }
        socket = null;
        in = null;
        out = null;
        input = null;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while connecting to the store");
        }
    }
}
