package io.symmem.store.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Read-decide-write operations (add, append, delete, a queue pop) as etcd transactions that apply at
 * most once, however often they are retried. Each try reads the key, decides, and writes only if the
 * key's mod revision is still the one read (else another writer came first: read again). When a
 * member dies under a transaction, the client cannot know whether it was applied; trying it again
 * could add twice. So every transaction also creates a receipt key of its own, on the client's lease,
 * and only if the receipt does not exist yet; a later try that finds the receipt knows an earlier one
 * was applied, and answers what that one decided. Receipts are deleted once read (and expire with
 * the lease if the client dies first).
 */
final class OnceWrites {

    /** What one try decided after its read. */
    sealed interface Decision<T> permits Answer, Write {}

    /** Nothing to write: the answer is known from the read. */
    record Answer<T>(T value) implements Decision<T> {}

    /**
     * Write {@code ops} if {@code guard}'s mod revision is still {@code guardModRevision} (0: the key
     * must still be absent); the operation then answers {@code answer}.
     */
    record Write<T>(ByteSequence guard, long guardModRevision, List<Op> ops, T answer) implements Decision<T> {}

    private final KV kv;
    private final SessionLease lease;
    private final EtcdCalls calls;
    private final String clientId;
    private final AtomicLong operations = new AtomicLong();

    OnceWrites(KV kv, SessionLease lease, EtcdCalls calls, String clientId) {
        this.kv = kv;
        this.lease = lease;
        this.calls = calls;
        this.clientId = clientId;
    }

    <T> CompletableFuture<T> run(String what, Duration budget, long deadlineNanos, Supplier<CompletableFuture<Decision<T>>> decide) {
        ByteSequence receipt = EtcdKeys.receipt(clientId, operations.incrementAndGet());
        Map<Integer, T> answers = new ConcurrentHashMap<>();
        AtomicInteger tries = new AtomicInteger();
        AtomicBoolean uncertain = new AtomicBoolean();
        return calls.retrying(what, budget, deadlineNanos, () -> {
            CompletableFuture<T> earlier = uncertain.get() ? earlierAnswer(receipt, answers) : CompletableFuture.completedFuture(null);
            return earlier.thenCompose(known -> known != null ? CompletableFuture.completedFuture(known)
                    : decide.get().thenCompose(decision -> apply(decision, receipt, tries.getAndIncrement(), answers, uncertain)));
        });
    }

    private <T> CompletableFuture<T> apply(Decision<T> decision, ByteSequence receipt, int attempt, Map<Integer, T> answers,
            AtomicBoolean uncertain) {
        if (decision instanceof Answer<T> answer) {
            return CompletableFuture.completedFuture(answer.value());
        }
        Write<T> write = (Write<T>) decision;
        answers.put(attempt, write.answer());
        return lease.id().thenCompose(leaseId -> {
            List<Op> then = new ArrayList<>(write.ops());
            then.add(Op.put(receipt, ByteSequence.from(Integer.toString(attempt), StandardCharsets.US_ASCII),
                    PutOption.builder().withLeaseId(leaseId).build()));
            CompletableFuture<TxnResponse> commit = kv.txn()
                    .If(new Cmp(write.guard(), Cmp.Op.EQUAL, CmpTarget.modRevision(write.guardModRevision())),
                            new Cmp(receipt, Cmp.Op.EQUAL, CmpTarget.version(0)))
                    .Then(then.toArray(Op[]::new))
                    .Else(Op.get(receipt, GetOption.DEFAULT))
                    .commit();
            return commit.handle((response, error) -> {
                if (error != null) {
                    // Sent, perhaps applied: the next try looks for the receipt first.
                    uncertain.set(true);
                    throw new java.util.concurrent.CompletionException(EtcdFailures.unwrap(error));
                }
                if (response.isSucceeded()) {
                    forget(receipt);
                    return write.answer();
                }
                var receipts = response.getGetResponses().get(0).getKvs();
                if (!receipts.isEmpty()) {
                    forget(receipt);
                    return answers.get(Integer.parseInt(receipts.get(0).getValue().toString(StandardCharsets.US_ASCII)));
                }
                throw EtcdFailures.ConflictRetry.INSTANCE;
            });
        });
    }

    /** The answer of an earlier try that was applied, or null if none was. */
    private <T> CompletableFuture<T> earlierAnswer(ByteSequence receipt, Map<Integer, T> answers) {
        return kv.get(receipt).thenApply(response -> {
            if (response.getKvs().isEmpty()) {
                return null;
            }
            forget(receipt);
            return answers.get(Integer.parseInt(response.getKvs().get(0).getValue().toString(StandardCharsets.US_ASCII)));
        });
    }

    /** The receipt has served: delete it without waiting (the lease removes it anyway if this fails). */
    private void forget(ByteSequence receipt) {
        kv.delete(receipt, DeleteOption.DEFAULT).exceptionally(e -> null);
    }
}
