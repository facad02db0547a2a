package io.symmem.store.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.smallrye.mutiny.Uni;
import io.symmem.store.CounterValues;
import io.symmem.store.DurationText;
import io.symmem.store.Store;
import io.symmem.store.StoreException;
import io.symmem.store.StoreLimits;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.wire.StoreArguments;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The rendezvous store on an etcd v3 cluster (SYMMEM_STORE=etcd://host:port,.../prefix), with the
 * semantics of {@link Store} and TCPStore: values under the job prefix; add, compare_set, append and
 * delete as transactions guarded by the key's mod revision (applied at most once, see
 * {@link OnceWrites}); waits through watches with deadlines ({@link KeyWaits}); queues as keys ordered
 * by creation revision, popped by a guarded delete. Every read is linearizable (jetcd's default), so a
 * member cut off from the quorum gives an error, never a stale value.
 *
 * <p>Differences from the TCPStore server, all outside what c10d specifies: a non-empty queue does
 * not make its name count as an existing key for check/await (queues have their own waits here);
 * values and transactions are bounded by the cluster's --max-request-bytes and --max-txn-ops too.
 *
 * <p>One client per store; its calls are multiplexed over one gRPC channel per member, so waits never
 * hold up other requests (no side connections needed, unlike TCP).
 */
public final class EtcdStore implements Store {

    /** Longest a single call may take before it counts as unanswered and is tried on another member. */
    private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(5);
    /** Default lifetime of the client's lease after its last renewal. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

    private final EtcdTarget target;
    private final Client client;
    private final KV kv;
    private final Watch watch;
    private final StoreLimits limits;
    private final Duration requestTimeout;
    private final String name;
    private final ScheduledExecutorService timer;
    private final EtcdCalls calls;
    private final KeyWaits waits;
    private final SessionLease lease;
    private final OnceWrites onceWrites;
    private final String clientId = UUID.randomUUID().toString().substring(0, 13);
    private final AtomicLong pushes = new AtomicLong();

    private EtcdStore(EtcdTarget target, StoreLimits limits, Duration requestTimeout, Duration leaseTtl) {
        this.target = target;
        this.limits = limits;
        this.requestTimeout = requestTimeout;
        this.name = target.describe();
        this.client = Client.builder()
                .endpoints(target.endpoints().stream().map(EtcdTarget.Endpoint::uri).toArray(java.net.URI[]::new))
                .namespace(EtcdKeys.bytes(target.prefix() + "/"))
                // Retries are this class's (EtcdCalls), bounded by each operation's deadline.
                .retryMaxAttempts(0)
                .connectTimeout(ATTEMPT_TIMEOUT)
                .interceptor(new UnaryDeadline(ATTEMPT_TIMEOUT))
                .build();
        this.kv = client.getKVClient();
        this.watch = client.getWatchClient();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "symmem-etcd-timer");
            t.setDaemon(true);
            return t;
        });
        this.calls = new EtcdCalls(timer, name);
        this.waits = new KeyWaits(kv, watch, calls, name);
        this.lease = new SessionLease(client.getLeaseClient(), leaseTtl, name);
        this.onceWrites = new OnceWrites(kv, lease, calls, clientId);
    }

    /**
     * Connects to the cluster and proves it answers (a linearizable read) within {@code timeout}.
     *
     * @param requestTimeout the deadline of every operation that does not wait for keys (SYMMEM_TIMEOUT_STORE)
     * @param leaseTtl how long the client's keys outlive it when it dies without closing
     */
    public static EtcdStore connect(EtcdTarget target, Duration requestTimeout, StoreLimits limits, Duration leaseTtl) {
        EtcdStore store = new EtcdStore(target, limits, requestTimeout, leaseTtl);
        try {
            store.ping().await().atMost(requestTimeout.plusSeconds(1));
            return store;
        } catch (RuntimeException e) {
            store.close();
            throw e instanceof StoreException ? e : new StoreException("etcd store " + target + " not reachable: " + e.getMessage(), e);
        }
    }

    public static EtcdStore connect(EtcdTarget target, Duration requestTimeout) {
        return connect(target, requestTimeout, StoreLimits.defaults(), DEFAULT_LEASE_TTL);
    }

    public EtcdTarget target() {
        return target;
    }

    @Override
    public String describe() {
        return name;
    }

    // ---- values -----------------------------------------------------------------------------

    @Override
    public Uni<Void> set(String key, byte[] value) {
        return checked(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> request("set of key '" + key + "'", () -> kv.put(EtcdKeys.value(key), ByteSequence.from(value)))
                        .thenApply(r -> null));
    }

    @Override
    public Uni<byte[]> get(String key, Duration timeout) {
        return checked(StoreArguments.checkKey(key, limits),
                () -> waits.awaitAll("get", List.of(key), timeout).thenApply(values -> values.get(key)));
    }

    @Override
    public Uni<Void> await(List<String> keys, Duration timeout) {
        return checked(StoreArguments.checkKeys(keys, limits),
                () -> keys.isEmpty() ? CompletableFuture.completedFuture(null)
                        : waits.awaitAll("wait", keys, timeout).thenApply(values -> null));
    }

    @Override
    public Uni<List<byte[]>> multiGet(List<String> keys, Duration timeout) {
        return checked(StoreArguments.checkKeys(keys, limits), () -> keys.isEmpty() ? CompletableFuture.completedFuture(List.of())
                : waits.awaitAll("multi get", keys, timeout).thenApply(values -> {
                    List<byte[]> ordered = new ArrayList<>(keys.size());
                    for (String key : keys) {
                        ordered.add(values.get(key));
                    }
                    return ordered;
                }));
    }

    @Override
    public Uni<Boolean> check(List<String> keys) {
        return checked(StoreArguments.checkKeys(keys, limits), () -> {
            long deadline = deadline();
            List<CompletableFuture<Boolean>> exists = new ArrayList<>();
            for (String key : keys) {
                exists.add(calls.retrying("check of key '" + key + "'", requestTimeout, deadline,
                        () -> kv.get(EtcdKeys.value(key), GetOption.builder().withCountOnly(true).build()))
                        .thenApply(r -> r.getCount() > 0));
            }
            return CompletableFuture.allOf(exists.toArray(CompletableFuture[]::new))
                    .thenApply(ok -> exists.stream().allMatch(CompletableFuture::join));
        });
    }

    @Override
    public Uni<Long> add(String key, long delta) {
        ByteSequence k = EtcdKeys.value(key);
        return checked(StoreArguments.checkKey(key, limits), () -> onceWrites.run("add to key '" + key + "'", requestTimeout,
                deadline(), () -> kv.get(k).thenApply(read -> {
                    KeyValue current = read.getKvs().isEmpty() ? null : read.getKvs().get(0);
                    long base = 0;
                    if (current != null) {
                        OptionalLong parsed = CounterValues.parse(current.getValue().getBytes());
                        if (parsed.isEmpty()) {
                            throw CounterValues.notAnInteger(name, key);
                        }
                        base = parsed.getAsLong();
                    }
                    long sum = base + delta; // wraps past the int64 range, as TCPStore's C++ addition
                    return new OnceWrites.Write<>(k, modRevision(current),
                            List.of(Op.put(k, ByteSequence.from(CounterValues.of(sum)), PutOption.DEFAULT)), sum);
                })));
    }

    @Override
    public Uni<Boolean> delete(String key) {
        ByteSequence k = EtcdKeys.value(key);
        return checked(StoreArguments.checkKey(key, limits), () -> onceWrites.run("delete of key '" + key + "'", requestTimeout,
                deadline(), () -> kv.get(k, GetOption.builder().withKeysOnly(true).build()).thenApply(read -> read.getKvs().isEmpty()
                        ? new OnceWrites.Answer<>(false)
                        : new OnceWrites.Write<>(k, read.getKvs().get(0).getModRevision(),
                                List.of(Op.delete(k, DeleteOption.DEFAULT)), true))));
    }

    /**
     * c10d compare_set. Repeating it is harmless (a try that was applied makes the next one see the
     * desired value and answer it), so it needs no receipt; the guard still makes read and write one step.
     */
    @Override
    public Uni<byte[]> compareSet(String key, byte[] expected, byte[] desired) {
        ByteSequence k = EtcdKeys.value(key);
        return checked(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(expected, limits),
                StoreArguments.checkValue(desired, limits)), () -> request("compare_set of key '" + key + "'",
                        () -> kv.get(k).thenCompose(read -> {
                            KeyValue current = read.getKvs().isEmpty() ? null : read.getKvs().get(0);
                            if (current == null && expected.length != 0) {
                                return CompletableFuture.completedFuture(expected);
                            }
                            if (current != null && !Arrays.equals(current.getValue().getBytes(), expected)) {
                                return CompletableFuture.completedFuture(current.getValue().getBytes());
                            }
                            return kv.txn()
                                    .If(new io.etcd.jetcd.op.Cmp(k, io.etcd.jetcd.op.Cmp.Op.EQUAL,
                                            io.etcd.jetcd.op.CmpTarget.modRevision(modRevision(current))))
                                    .Then(Op.put(k, ByteSequence.from(desired), PutOption.DEFAULT))
                                    .commit().thenApply(txn -> {
                                        if (!txn.isSucceeded()) {
                                            throw EtcdFailures.ConflictRetry.INSTANCE;
                                        }
                                        return desired;
                                    });
                        })));
    }

    @Override
    public Uni<Void> append(String key, byte[] value) {
        ByteSequence k = EtcdKeys.value(key);
        return checked(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> onceWrites.run("append to key '" + key + "'", requestTimeout, deadline(), () -> kv.get(k).thenApply(read -> {
                    KeyValue current = read.getKvs().isEmpty() ? null : read.getKvs().get(0);
                    byte[] joined = value;
                    if (current != null) {
                        byte[] before = current.getValue().getBytes();
                        joined = Arrays.copyOf(before, before.length + value.length);
                        System.arraycopy(value, 0, joined, before.length, value.length);
                    }
                    return new OnceWrites.Write<>(k, modRevision(current),
                            List.of(Op.put(k, ByteSequence.from(joined), PutOption.DEFAULT)), Boolean.TRUE);
                })).thenApply(done -> null));
    }

    /** One transaction: other clients see all of the keys set or none. Repeating it is harmless. */
    @Override
    public Uni<Void> multiSet(List<String> keys, List<byte[]> values) {
        return checked(StoreArguments.checkMultiSet(keys, values, limits), () -> {
            if (keys.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            Op[] puts = new Op[keys.size()];
            for (int i = 0; i < keys.size(); i++) {
                puts[i] = Op.put(EtcdKeys.value(keys.get(i)), ByteSequence.from(values.get(i)), PutOption.DEFAULT);
            }
            return request("multi set of " + keys.size() + " key(s)", () -> kv.txn().Then(puts).commit()).thenApply(r -> null);
        });
    }

    /** Values under this store's prefix (queues, receipts and other jobs' keys are not counted). */
    @Override
    public Uni<Long> numKeys() {
        return checked(null, () -> request("num_keys", () -> kv.get(EtcdKeys.VALUES,
                GetOption.builder().isPrefix(true).withCountOnly(true).build())).thenApply(r -> r.getCount()));
    }

    @Override
    public Uni<List<String>> listKeys() {
        return checked(null, () -> request("list_keys", () -> kv.get(EtcdKeys.VALUES,
                GetOption.builder().isPrefix(true).withKeysOnly(true).build())).thenApply(r -> {
                    List<String> keys = new ArrayList<>(r.getKvs().size());
                    for (KeyValue kv : r.getKvs()) {
                        keys.add(EtcdKeys.userKey(kv.getKey()));
                    }
                    return keys;
                }));
    }

    // ---- queues -----------------------------------------------------------------------------

    /** Each item is a key of its own, unique to this push, so repeating the put cannot push twice. */
    @Override
    public Uni<Void> queuePush(String key, byte[] value) {
        return checked(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)), () -> {
            ByteSequence item = EtcdKeys.queue(key).concat(EtcdKeys.bytes(clientId + "-" + pushes.incrementAndGet()));
            return request("push to queue '" + key + "'", () -> kv.put(item, ByteSequence.from(value))).thenApply(r -> null);
        });
    }

    /**
     * Takes the oldest item (lowest creation revision) with a delete guarded by its mod revision, so
     * that two pops never take the same item; an empty queue is watched until a push or the deadline.
     */
    @Override
    public Uni<byte[]> queuePop(String key, Duration timeout) {
        return checked(StoreArguments.checkKey(key, limits), () -> {
            long deadline = System.nanoTime() + timeout.toNanos();
            CompletableFuture<byte[]> result = new CompletableFuture<>();
            popUntil(key, timeout, deadline, result);
            return result;
        });
    }

    /** Marks an empty queue seen at a revision: the pop watches from there. */
    private record Empty(long revision) {}

    private void popUntil(String key, Duration timeout, long deadline, CompletableFuture<byte[]> result) {
        ByteSequence queue = EtcdKeys.queue(key);
        GetOption oldest = GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                .withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build();
        Map<ByteSequence, byte[]> taken = new java.util.concurrent.ConcurrentHashMap<>();
        CompletableFuture<Object> popped = onceWrites.<Object>run("pop of queue '" + key + "'", timeout, deadline,
                () -> kv.get(queue, oldest).thenApply(read -> {
                    if (read.getKvs().isEmpty()) {
                        return new OnceWrites.Answer<>(new Empty(read.getHeader().getRevision()));
                    }
                    KeyValue item = read.getKvs().get(0);
                    taken.put(item.getKey(), item.getValue().getBytes());
                    return new OnceWrites.Write<>(item.getKey(), item.getModRevision(),
                            List.of(Op.delete(item.getKey(), DeleteOption.DEFAULT)), item.getValue().getBytes());
                }));
        popped.whenComplete((answer, error) -> {
            if (error != null) {
                result.completeExceptionally(EtcdFailures.unwrap(error));
            } else if (answer instanceof byte[] value) {
                result.complete(value);
            } else {
                awaitPush(key, queue, ((Empty) answer).revision() + 1, timeout, deadline, result);
            }
        });
    }

    /** Watches the queue from {@code revision} for a push, then pops again (another pop may take it first). */
    private void awaitPush(String key, ByteSequence queue, long revision, Duration timeout, long deadline,
            CompletableFuture<byte[]> result) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            result.completeExceptionally(new StoreTimeoutException("store " + name + ": timed out after " + DurationText.of(timeout)
                    + " waiting for a value in queue [" + key + "]", List.of(key)));
            return;
        }
        CompletableFuture<Void> pushed = new CompletableFuture<>();
        Watch.Watcher watcher = watch.watch(queue, WatchOption.builder().isPrefix(true).withRevision(revision).withNoDelete(true)
                .withRequireLeader(true).build(), io.etcd.jetcd.Watch.listener(response -> {
                    if (response.getEvents().stream().anyMatch(e -> e.getEventType() == WatchEvent.EventType.PUT)) {
                        pushed.complete(null);
                    }
                }, error -> pushed.complete(null))); // read again: the pop itself says what is wrong
        var expiry = timer.schedule(() -> pushed.complete(null), remaining, TimeUnit.NANOSECONDS);
        result.whenComplete((v, e) -> pushed.complete(null));
        pushed.whenComplete((v, e) -> {
            expiry.cancel(false);
            watcher.close();
            if (!result.isDone()) {
                if (deadline - System.nanoTime() <= 0) {
                    awaitPush(key, queue, revision, timeout, deadline, result);
                } else {
                    popUntil(key, timeout, deadline, result);
                }
            }
        });
    }

    @Override
    public Uni<Long> queueLength(String key) {
        return checked(StoreArguments.checkKey(key, limits), () -> request("length of queue '" + key + "'",
                () -> kv.get(EtcdKeys.queue(key), GetOption.builder().isPrefix(true).withCountOnly(true).build()))
                .thenApply(r -> r.getCount()));
    }

    /** A linearizable read: only a member that reaches the quorum can answer it. */
    @Override
    public Uni<Void> ping() {
        return checked(null, () -> request("ping", () -> kv.get(EtcdKeys.PING, GetOption.builder().withCountOnly(true).build()))
                .thenApply(r -> null));
    }

    // ---- leases: what liveness needs ----------------------------------------------------------

    /**
     * Sets {@code key} on this client's lease: it stays while the process lives and keeps the lease
     * renewed, and disappears by itself after the lease's TTL once it does not.
     */
    public Uni<Void> setOnLease(String key, byte[] value) {
        return checked(StoreArguments.first(StoreArguments.checkKey(key, limits), StoreArguments.checkValue(value, limits)),
                () -> request("set of key '" + key + "' on the lease", () -> lease.id().thenCompose(id ->
                        kv.put(EtcdKeys.value(key), ByteSequence.from(value), PutOption.builder().withLeaseId(id).build())))
                        .thenApply(r -> null));
    }

    /** Seconds the client's keys outlive it. */
    public long leaseTtlSeconds() {
        return lease.ttlSeconds();
    }

    /** Hears when this client's lease was lost although the process lives (the cluster was out of reach). */
    public void whenLeaseLost(Consumer<String> listener) {
        lease.whenLost(listener);
    }

    /**
     * Calls {@code removed} with the key (without {@code keyPrefix}'s store prefix handling: the full
     * user key) of every value key under {@code keyPrefix} that is deleted or expires from now on.
     * {@code failed} hears if the watch ends for good. Close the result to stop.
     */
    public AutoCloseable watchRemovals(String keyPrefix, Consumer<String> removed, Consumer<Throwable> failed) {
        Watch.Watcher watcher = watch.watch(EtcdKeys.value(keyPrefix), WatchOption.builder().isPrefix(true).withNoPut(true)
                .build(), Watch.listener(response -> {
                    for (WatchEvent event : response.getEvents()) {
                        if (event.getEventType() == WatchEvent.EventType.DELETE) {
                            removed.accept(EtcdKeys.userKey(event.getKeyValue().getKey()));
                        }
                    }
                }, failed::accept));
        return watcher::close;
    }

    @Override
    public void close() {
        lease.close();
        client.close();
        timer.shutdownNow();
    }

    /**
     * Drops the client without revoking its lease, as a process that dies does: its lease keys stay
     * until the TTL runs out. For tests of what the survivors see.
     */
    void closeAsIfKilled() {
        lease.abandon();
        client.close();
        timer.shutdownNow();
    }

    // ---- plumbing -----------------------------------------------------------------------------

    private long deadline() {
        return System.nanoTime() + requestTimeout.toNanos();
    }

    private <T> CompletableFuture<T> request(String what, Supplier<CompletableFuture<T>> call) {
        return calls.retrying(what, requestTimeout, deadline(), call);
    }

    private static long modRevision(KeyValue current) {
        return current == null ? 0 : current.getModRevision();
    }

    /** The operation, unless {@code problem} refuses its arguments (then nothing is sent). */
    private static <T> Uni<T> checked(RuntimeException problem, Supplier<CompletableFuture<T>> operation) {
        if (problem != null) {
            return Uni.createFrom().failure(problem);
        }
        return Uni.createFrom().completionStage(operation);
    }

    /** Every unary call gets a deadline, so that no call waits forever on a member that never answers. */
    private record UnaryDeadline(Duration timeout) implements ClientInterceptor {
        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
                options = options.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
            return next.newCall(method, options);
        }
    }
}
