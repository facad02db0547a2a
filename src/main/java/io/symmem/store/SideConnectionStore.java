package io.symmem.store;

import io.smallrye.mutiny.Uni;
import io.symmem.store.server.LocalStore;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.function.Supplier;

/**
 * The store of a process that reaches it over TCP, as its components and its HTTP face use it: what
 * could hold up or break a connection runs on a connection of its own from {@link SideConnections},
 * everything else on the one shared (pipelined) client:
 * <ul>
 *   <li>every wait ({@code get}, {@code await}, {@code multiGet}, {@code queuePop}): a WAIT holds its
 *       connection's other answered requests until it is answered;</li>
 *   <li>{@code add}: on a value that is not a decimal integer the server closes the connection (TCPStore
 *       does the same, the protocol has no error answer), which on the shared one would fail every
 *       request of the process in flight. Here it costs one side connection, and the caller gets the
 *       {@link IllegalArgumentException} a {@link LocalStore} gives.</li>
 * </ul>
 * A read on a side connection of a key this process just wrote on the shared one waits for a round
 * trip on the shared connection first ({@link UnconfirmedWrites}): the kernel may deliver the side
 * connection's request before the write, and the server can only order what it has read (see
 * docs/store.md). Owns both: {@link #close()} closes them.
 */
public final class SideConnectionStore implements Store {

    private final Store shared;
    private final SideConnections sides;
    private final UnconfirmedWrites unconfirmed;

    public SideConnectionStore(Store shared, SideConnections sides) {
        this.shared = shared;
        this.sides = sides;
        this.unconfirmed = new UnconfirmedWrites(shared::ping);
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return afterWritesTo(Collections.singletonList(key), () -> sides.run(connection -> connection.get(key, timeout)));
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return sides.run(connection -> connection.await(keys, timeout));
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return afterWritesTo(keys, () -> sides.run(connection -> connection.multiGet(keys, timeout)));
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return afterWritesTo(Collections.singletonList(key), () -> sides.run(connection -> connection.queuePop(key, timeout)));
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        Uni<Void> written = shared.set(key, value);
        unconfirmed.wrote(key);
        return written;
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return afterWritesTo(Collections.singletonList(key), () -> sides.run(connection -> connection.add(key, delta)))
                .onFailure(StoreException.class).recoverWithUni(lost -> CurrentValue.read(shared, key).map(value -> {
                    if (value.isPresent() && CounterValues.parse(value.get()).isEmpty()) {
                        throw CounterValues.notAnInteger(describe(), key); // why the server closed the connection
                    }
                    throw (StoreException) lost;
                }));
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return shared.check(keys);
    }

    @Override
    public Uni<Boolean> delete(String key) {
        return shared.delete(key);
    }

    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        return shared.compareSet(key, expected, desired);
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        Uni<Void> written = shared.append(key, value);
        unconfirmed.wrote(key);
        return written;
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        Uni<Void> written = shared.multiSet(keys, values);
        unconfirmed.wrote(keys);
        return written;
    }

    @Override
    public Uni<Long> numKeys() {
        return shared.numKeys();
    }

    @Override
    public Uni<List<String>> listKeys() {
        return shared.listKeys();
    }

    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        Uni<Void> written = shared.queuePush(key, value);
        unconfirmed.wrote(key);
        return written;
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return shared.queueLength(key);
    }

    /**
     * Runs a side-connection request on {@code keys} after this process's unanswered writes to them on
     * the shared connection are confirmed (see {@link UnconfirmedWrites}). {@code await} needs no such
     * step: the write it would wait for releases it whenever it arrives.
     */
    private <T> Uni<T> afterWritesTo(List<String> keys, Supplier<Uni<T>> request) {
        return unconfirmed.confirm(keys, request);
    }

    @Override
    public Uni<Void> ping() {
        return shared.ping();
    }

    @Override
    public String describe() {
        return shared.describe();
    }

    @Override
    public void close() {
        sides.close();
        shared.close();
    }
}
