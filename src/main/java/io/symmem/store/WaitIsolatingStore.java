package io.symmem.store;

import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;

/**
 * The store of a process that reaches it over TCP, as its components and its HTTP face use it: every
 * wait ({@code get}, {@code await}, {@code multiGet}, {@code queuePop}) runs on a connection of its own
 * from {@link WaitConnections}, everything else on the one shared (pipelined) client. So no wait, however
 * long, holds up another request of the process; the server's cross-connection order still lets a wait
 * see every set that reached it before (see docs/store.md). Owns both: {@link #close()} closes them.
 */
public final class WaitIsolatingStore implements Store {

    private final Store shared;
    private final WaitConnections waits;

    public WaitIsolatingStore(Store shared, WaitConnections waits) {
        this.shared = shared;
        this.waits = waits;
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return waits.run(connection -> connection.get(key, timeout));
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return waits.run(connection -> connection.await(keys, timeout));
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return waits.run(connection -> connection.multiGet(keys, timeout));
    }

    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return waits.run(connection -> connection.queuePop(key, timeout));
    }

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return shared.set(key, value);
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        return shared.add(key, delta);
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
        return shared.append(key, value);
    }

    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return shared.multiSet(keys, values);
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
        return shared.queuePush(key, value);
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return shared.queueLength(key);
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
        waits.close();
        shared.close();
    }
}
